/**
 * Screen scenarios run a few times in `npm test` (`tests/unit/core/terminal-screen.test.ts`,
 * `terminal-screen.pty.test.ts`, `job-screen.test.ts`) and many times beside CPU burners
 * (`tests/stress/screens.test.ts`). `run` names the run in a failure and varies the bytes.
 */
import assert from "node:assert/strict";
import { prepareExec } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { TerminalScreen } from "../../src/core/screen/terminal-screen.ts";
import type { ScreenJob, ScreenJobOptions } from "./screen-pty.ts";

type StartOnScreen = (command: string, options?: ScreenJobOptions) => ScreenJob;

/** `frames` full screens, each cut in three writes: a snapshot right after the writes shows the whole frame. */
export async function framesInOrder(frames: number): Promise<void> {
  const s = new TerminalScreen({ cols: 40, rows: 10 });
  for (let frame = 0; frame < frames; frame++) {
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
}

/** A raw-mode program on a PTY asks for the cursor position and prints the answer it read. */
export async function cursorPositionAnswered(start: StartOnScreen, run: number): Promise<void> {
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

/** `seq` on a 40×10 PTY: once the output is read to the end, the snapshot shows its last nine lines. */
export async function lastBytesOnScreen(start: StartOnScreen, run: number): Promise<void> {
  const job = start(`seq 1 ${3000 + run}`, { cols: 40, rows: 10 });
  await job.closed;
  const last = 3000 + run;
  const expected = [...Array.from({ length: 9 }, (_, i) => String(last - 8 + i)), ""];
  assert.deepEqual((await job.screen.snapshot()).lines, expected, `run ${run}`);
  assert.deepEqual((await job.screen.snapshot()).cursor, { row: 10, col: 1 });
}

/** 400 lines on a 40×8 PTY through the runtime: the exit's report shows the last screen. */
export async function exitReportShowsLastScreen(runtime: ExecRuntime, cwd: string, run: number): Promise<void> {
  const report = await runtime.exec(
    prepareExec(
      { cmd: "for i in $(seq 1 400); do echo line $i; done", tty: true, cols: 40, rows: 8, screen: true, yield_time_ms: 20_000 },
      cwd,
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
