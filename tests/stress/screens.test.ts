/**
 * Screens beside CPU burners: a snapshot right after a write reflects every byte before it (200
 * frames), a PTY program asking for the cursor position gets its answer and a snapshot after the
 * end shows the last bytes (10 runs each), and an exit's report shows the last screen (20 runs).
 * Fewer runs without burners: `tests/unit/core/terminal-screen.test.ts`,
 * `terminal-screen.pty.test.ts` and `job-screen.test.ts` (the scenarios are
 * `tests/helpers/screen-scenarios.ts`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { startBurners } from "../helpers/load.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { type ScreenJob, type ScreenJobOptions, startOnScreen } from "../helpers/screen-pty.ts";
import { cursorPositionAnswered, exitReportShowsLastScreen, framesInOrder, lastBytesOnScreen } from "../helpers/screen-scenarios.ts";

const dir = mkdtempSync(join(tmpdir(), "stress-screens-"));
const jobs: ScreenJob[] = [];
function start(command: string, options: ScreenJobOptions = {}): ScreenJob {
  const job = startOnScreen(command, { cwd: dir, env: { HOME: dir }, ...options });
  jobs.push(job);
  return job;
}
after(() => {
  for (const job of jobs) job.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("screens beside CPU burners", () => {
  it("a snapshot taken right after a write reflects every byte written before it (200 frames, with CPU burners)", async () => {
    const stop = startBurners(2);
    try {
      await framesInOrder(200);
    } finally {
      stop();
    }
  });

  it(
    "on a PTY, a program asking for the cursor position gets ESC[row;colR written back (10 runs, with CPU burners)",
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const stop = startBurners(2);
      try {
        for (let run = 0; run < 10; run++) await cursorPositionAnswered(start, run);
      } finally {
        stop();
      }
    },
  );

  it(
    "on a PTY, after the output is read to the end, a snapshot shows its last bytes (10 runs, with CPU burners)",
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const stop = startBurners(2);
      try {
        for (let run = 0; run < 10; run++) await lastBytesOnScreen(start, run);
      } finally {
        stop();
      }
    },
  );

  it(
    "the exit's report shows the last screen with every byte the job printed, 20 times beside CPU burners",
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const stop = startBurners(2);
      try {
        const runtime = new ExecRuntime();
        for (let run = 0; run < 20; run++) await exitReportShowsLastScreen(runtime, dir, run);
        await runtime.shutdown();
      } finally {
        stop();
      }
    },
  );
});
