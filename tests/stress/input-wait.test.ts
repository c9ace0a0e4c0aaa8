/**
 * The input-wait probe beside two CPU burners (`npm run test:stress`): a Python `input()` becomes
 * likely and `sleep 5 | cat` never does (5 runs); a quiet line ending in `:` and an answered prompt
 * (pipes and PTY) are never likely while a real read is (20 runs). Without burners:
 * `tests/unit/core/input-wait.test.ts`; the input wake's races: `input-wake.test.ts`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { probeInputWait } from "../../src/core/input-wait/input-wait.ts";
import { answeredPrompt, becomesLikely, neverLikely, quietColonLine, run } from "../helpers/input-wait-jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { scratchDirectory } from "../helpers/runtime.ts";

const RUNS = 20;
const SKIP = process.platform !== "linux" ? "the scan that decides is Linux only" : SKIP_WITHOUT_PTY;

describe("input_wait beside two CPU burners", { skip: SKIP }, () => {
  const dir = scratchDirectory("input-wait-stress-");
  let stop: () => void;
  before(() => {
    stop = startBurners(2);
  });
  after(() => stop());

  it("answers the same with CPU burners beside it (5 runs of each case)", async () => {
    for (let runNo = 0; runNo < 5; runNo++) {
      // The pipe and the PTY case at once: separate jobs, each probed on its own.
      await Promise.all(
        [false, true].map(async (tty) => {
          const waiting = await run(`python3 -c 'input("x? ")'`, tty);
          assert.equal((await becomesLikely(waiting)).likely, true);
          waiting.stop();
          const busy = await run("sleep 5 | cat", tty);
          await neverLikely(busy, 600);
          busy.stop();
        }),
      );
    }
  });

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
});
