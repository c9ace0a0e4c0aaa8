/**
 * The input wake beside CPU burners (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2`): a job blocked on a prompt
 * wakes once per prompt, three times over, with a span of more than one wake's wait after each in
 * which no second one comes; and an input wake held during a run whose prompt ends before the settle
 * never goes out (20 runs), nor one for a hidden prompt a person types into before the settle (10 runs,
 * a PTY). Once, without burners: `tests/unit/core/runtime.input-wake.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { heldWakeAfterPromptEnds, heldWakeWhilePersonTypes } from "../helpers/held-input-wake.ts";
import { inputsOf, inputWakeAfterTwoSeconds, promptWakesOnce, SKIP_WITHOUT_PROBE } from "../helpers/input-wake.ts";
import { startBurners } from "../helpers/load.ts";
import { quietFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { runtimeWithWakes, scratchDirectory } from "../helpers/runtime.ts";

const RUNS = 20;

inputWakeAfterTwoSeconds();

describe("the input wake beside CPU burners", { skip: SKIP_WITHOUT_PROBE }, () => {
  const dir = scratchDirectory("input-wake-stress-");

  it("wakes exactly once per prompt with two burners running, 3 runs", async () => {
    const stop = startBurners(2);
    const { runtime, batches } = runtimeWithWakes();
    try {
      for (let i = 0; i < 3; i++) {
        const { id, wake } = await promptWakesOnce(runtime, batches);
        assert.equal(wake.line, "Overwrite config.json? [y/N]");
        await quietFor(2_500);
        assert.equal(inputsOf(batches).filter((w) => w.jobId === id).length, 1);
        await runtime.kill(id, "SIGKILL");
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });

  it(`an input wake held during a run whose prompt ends before the settle never goes out (${RUNS} runs)`, async () => {
    const stop = startBurners(2);
    const { runtime, batches } = runtimeWithWakes();
    try {
      for (let i = 0; i < RUNS; i++) {
        assert.deepEqual(await heldWakeAfterPromptEnds(runtime, batches, dir, i % 2 ? "timed out, going on\n" : ""), [], `run ${i}`);
        assert.equal(runtime.completions.waiting, 0, `run ${i}`);
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });

  it(
    "an input wake held during a run for a hidden prompt a person types into before the settle never goes out (10 runs)",
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const stop = startBurners(2);
      const { runtime, batches } = runtimeWithWakes();
      try {
        for (let i = 0; i < 10; i++) assert.deepEqual(await heldWakeWhilePersonTypes(runtime, batches), [], `run ${i}`);
      } finally {
        stop();
        await runtime.shutdown();
      }
    },
  );
});
