/**
 * The input-wait races, 20 runs each beside two CPU burners (`npm run test:stress`): a quiet line
 * ending in `:` and an answered prompt (pipes and PTY) are never likely while a real read is, and an
 * input wake held during a run whose prompt ends before the settle never goes out.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { probeInputWait } from "../../src/core/input-wait/input-wait.ts";
import { heldWakeAfterPromptEnds } from "../helpers/held-input-wake.ts";
import { answeredPrompt, becomesLikely, neverLikely, quietColonLine, run } from "../helpers/input-wait-jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { runtimeWithWakes, scratchDirectory } from "../helpers/runtime.ts";

const RUNS = 20;
const SKIP = process.platform !== "linux" ? "the scan that decides is Linux only" : SKIP_WITHOUT_PTY;

describe("input_wait beside two CPU burners", { skip: SKIP }, () => {
  const dir = scratchDirectory("input-wait-stress-");
  let stop: () => void;
  before(() => {
    stop = startBurners(2);
  });
  after(() => stop());

  it(`a quiet line ending in ':' and an answered prompt are never likely, a real read is (${RUNS} runs, pipes and PTY)`, async () => {
    for (let i = 0; i < RUNS; i++) {
      await Promise.all(
        [false, true].map(async (tty) => {
          const jobs = [await quietColonLine(tty), await answeredPrompt(tty, dir)];
          try {
            await Promise.all(jobs.map((job) => neverLikely(job)));
          } finally {
            for (const job of jobs) job.stop();
          }
          const reading = await run("read -p 'Name: ' x", tty);
          assert.equal((await becomesLikely(reading)).reason, "syscall");
          assert.equal(probeInputWait(reading.query()).likely, true);
          reading.stop();
        }),
      );
    }
  });

  it(`an input wake held during a run whose prompt ends before the settle never goes out (${RUNS} runs)`, async () => {
    const saved = process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
    process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = "2";
    const { runtime, batches } = runtimeWithWakes();
    try {
      for (let i = 0; i < RUNS; i++) {
        assert.deepEqual(await heldWakeAfterPromptEnds(runtime, batches, dir, i % 2 ? "timed out, going on\n" : ""), [], `run ${i}`);
        assert.equal(runtime.completions.waiting, 0, `run ${i}`);
      }
    } finally {
      await runtime.shutdown();
      if (saved === undefined) delete process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
      else process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = saved;
    }
  });
});
