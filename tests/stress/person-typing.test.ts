/**
 * A person typing into jobs, beside CPU burners: the reply to what they typed never wakes and the
 * later line does, for 6 jobs at once; an `ask_user` dialog ends with its job (it exits, or is
 * killed), 5 rounds alternating pipes and a PTY; every key reaches a raw-mode program in order, 5
 * runs. Without burners: `tests/unit/core/user-typing.test.ts` and `person-news.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { dialogEndsWithTheJob, keysReachARawModeProgram } from "../helpers/ask-user.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimesWithWakes } from "../helpers/runtime.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);
const SECRET = "hunter2-correct-horse";
const made = runtimesWithWakes();

describe("a person typing into jobs, beside CPU burners", () => {
  it("the reply never wakes and the later line does, for 6 jobs at once with CPU burners beside them", async () => {
    const stopBurners = startBurners();
    try {
      const { runtime, batches } = made();
      const script = 'IFS= read -r line; echo "you said $line"; sleep 2; echo READY; sleep 300';
      const ids = await Promise.all(
        [false, true, false, true, false, true].map(async (tty) => {
          const id = runningId(await runtime.exec(exec(script, { tty, wake_on_pattern: `${SECRET}|READY` })))!;
          const taken = runtime.typeInto(id);
          assert.ok("typing" in taken);
          await taken.typing.type(Buffer.from(`${SECRET}${tty ? "\r" : "\n"}`));
          taken.typing.end();
          return id;
        }),
      );
      const lines = () => batches.flatMap((batch) => batch.patterns ?? []);
      await waitFor(() => lines().length === ids.length, "every job's READY wake", 20_000);
      assert.deepEqual(new Set(lines().map((wake) => wake.jobId)), new Set(ids), "one wake per job");
      assert.deepEqual(new Set(lines().map((wake) => `${wake.lineWithheld}:${wake.line}:${wake.more}`)), new Set(["true::0"]));
    } finally {
      stopBurners();
    }
  });

  for (const how of ["exits", "is killed"] as const) {
    it(`when the job ${how}, the ask_user dialog closes and the call returns the exit with 0 bytes, not cancelled (5 runs beside CPU burners)`, async () => {
      const stop = startBurners();
      try {
        const { runtime } = made();
        for (let round = 0; round < 5; round++) await dialogEndsWithTheJob(runtime, how, round % 2 === 1, round);
      } finally {
        stop();
      }
    });
  }

  it("every key reaches a raw-mode program in order, with CPU burners beside it (5 runs)", async () => {
    const stopBurners = startBurners();
    try {
      for (let run = 0; run < 5; run++) {
        const { runtime } = made();
        await keysReachARawModeProgram(runtime, run);
        await runtime.shutdown();
      }
    } finally {
      stopBurners();
    }
  });
});
