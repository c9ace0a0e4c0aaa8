/**
 * Screens beside CPU burners: a snapshot right after a write reflects every byte before it (200
 * frames), a PTY program asking for the cursor position gets its answer and a snapshot after the
 * end shows the last bytes (10 runs each), and an exit's report shows the last screen (20 runs).
 * Fewer runs without burners: `tests/unit/core/terminal-screen.test.ts`,
 * `terminal-screen.pty.test.ts` and `job-screen.test.ts`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { TerminalScreen } from "../../src/core/screen/terminal-screen.ts";
import { startBurners } from "../helpers/load.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { type ScreenJob, type ScreenJobOptions, startOnScreen } from "../helpers/screen-pty.ts";

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
      const s = new TerminalScreen({ cols: 40, rows: 10 });
      for (let frame = 0; frame < 200; frame++) {
        // A frame cut in three writes, the way a PTY read may split it.
        const text = `\x1b[H\x1b[2J${Array.from({ length: 10 }, (_, row) => `frame ${frame} row ${row}`).join("\r\n")}`;
        const bytes = Buffer.from(text, "utf8");
        s.write(bytes.subarray(0, 7));
        s.write(bytes.subarray(7, 50));
        s.write(bytes.subarray(50));
        const snap = await s.snapshot();
        assert.equal(snap.lines[0], `frame ${frame} row 0`);
        assert.equal(snap.lines[9], `frame ${frame} row 9`);
      }
      s.dispose();
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
        for (let run = 0; run < 10; run++) {
          const job = start(
            `stty -echo raw; printf 'ab\\r\\ncd${"x".repeat(run)}\\e[6n'; read -rs -d R reply; stty sane; printf '\\nreply:%s:\\n' "\${reply#?}"`,
          );
          assert.equal((await job.exited).code, 0, `run ${run}`);
          await job.closed;
          assert.match(job.raw().toString("utf8"), new RegExp(`reply:\\[2;${3 + run}:`), `run ${run}`);
          assert.deepEqual(
            job.replies.map((bytes) => bytes.toString("latin1")),
            [`\x1b[2;${3 + run}R`],
          );
        }
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
        for (let run = 0; run < 10; run++) {
          const job = start(`seq 1 ${3000 + run}`, { cols: 40, rows: 10 });
          await job.closed;
          const last = 3000 + run;
          const expected = [...Array.from({ length: 9 }, (_, i) => String(last - 8 + i)), ""];
          assert.deepEqual((await job.screen.snapshot()).lines, expected, `run ${run}`);
          assert.deepEqual((await job.screen.snapshot()).cursor, { row: 10, col: 1 });
        }
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
        for (let run = 0; run < 20; run++) {
          const report = await runtime.exec(
            prepareExec(
              { cmd: "for i in $(seq 1 400); do echo line $i; done", tty: true, cols: 40, rows: 8, screen: true, yield_time_ms: 20_000 },
              dir,
              process.env,
            ),
          );
          assert.equal(report.job.exit?.exitCode, 0);
          assert.deepEqual(
            report.screen?.lines,
            ["line 394", "line 395", "line 396", "line 397", "line 398", "line 399", "line 400", ""],
            `run ${run}`,
          );
        }
        await runtime.shutdown();
      } finally {
        stop();
      }
    },
  );
});
