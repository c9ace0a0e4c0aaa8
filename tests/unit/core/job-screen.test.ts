/**
 * A PTY job's screen, wired into the job and the runtime: built at spawn and fed from the first byte,
 * `screen: true` returning the screen while the stream delta is still consumed, the automatic view
 * on the alternate screen and back, `screen: false`, refusals on pipes before anything runs, a
 * terminal query answered, a resize followed, the last screen of an exit (many times, under load),
 * answers bounded when a program never reads them, and the emulator freed once the job is final.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { humanView } from "../../../src/core/job/job-snapshot.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { jobEnvironment } from "../../../src/core/request/shell.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import type { JobScreen } from "../../../src/core/screen/job-screen.ts";
import { SCREEN_REPLY_PENDING_BYTES } from "../../../src/core/screen/job-screen.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { StartedJobs, untilExit } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";
import { exitReportShowsLastScreen } from "../../helpers/screen-scenarios.ts";

const dir = mkdtempSync(join(tmpdir(), "piue-job-screen-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const jobs = new StartedJobs();
const exec = (cmd: string, extra: Record<string, unknown> = {}) => prepareExec({ cmd, yield_time_ms: 1_000, ...extra }, dir, process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);
const pty = { skip: SKIP_WITHOUT_PTY };
/** The job's screen wiring (private to the job): a test looks at what no result shows. */
const screenOf = (job: object) => Reflect.get(job, "screen") as JobScreen | undefined;

describe("screen: true through the runtime", () => {
  it("shows what the job printed before any request, with the cursor; the stream delta is consumed", pty, async () => {
    const runtime = new ExecRuntime();
    const first = await runtime.exec(exec("printf 'one\\ntwo\\n'; exec sleep 30", { tty: true, cols: 40, rows: 10, screen: true }));
    assert.deepEqual(first.screen?.lines, ["one", "two", ""]);
    assert.deepEqual(first.screen?.cursor, { row: 3, col: 1 });
    assert.equal(first.screen?.alternate, false);
    assert.deepEqual([first.screen?.cols, first.screen?.rows], [40, 10]);
    assert.equal(first.output.text, "one\ntwo\n", "the stream was read all the same");
    // The next stream read starts after it: only the echo of what this call typed.
    const next = await runtime.interact(write(runningId(first)!, { chars: "x", yield_time_ms: 1_000 }));
    assert.equal(next.screen, undefined);
    assert.equal(next.output.text, "x");
    await runtime.shutdown();
  });

  it("refuses screen: true without tty before anything runs, and on a pipe job before anything is written", async () => {
    const marker = join(dir, "ran");
    assert.throws(
      () => exec(`touch '${marker}'`, { screen: true }),
      (error: Error) => {
        assert.ok(error instanceof ExecRequestError);
        assert.match(error.message, /screen: true .*tty: true.*Nothing was started/);
        return true;
      },
    );
    assert.equal(existsSync(marker), false);
    const runtime = new ExecRuntime();
    const started = await runtime.exec(exec("cat", { yield_time_ms: 300 }));
    const id = runningId(started)!;
    await assert.rejects(runtime.interact(write(id, { chars: "typed\\n", screen: true })), /runs on pipes.*Nothing was written/);
    // screen: false asks for the stream, which is what a pipe job gives anyway.
    const polled = await runtime.interact(write(id, { chars: "after\\n", screen: false, yield_time_ms: 1_000 }));
    assert.equal(polled.output.text, "after\n", "the refused call wrote nothing");
    assert.equal(polled.screen, undefined);
    await runtime.shutdown();
  });
});

describe("the automatic screen view", () => {
  it(
    "shows the screen while the program is on the alternate screen; screen: false forces the stream; leaving it returns to the stream",
    pty,
    async () => {
      const runtime = new ExecRuntime();
      const script =
        "printf 'before\\n'; printf '\\033[?1049h\\033[HALT-SCREEN'; read a; read b; printf '\\033[?1049l'; echo after; exec sleep 30";
      const started = await runtime.exec(exec(script, { tty: true, cols: 40, rows: 10 }));
      const id = runningId(started)!;
      assert.equal(started.screen?.alternate, true);
      assert.equal(started.screen?.lines[0], "ALT-SCREEN");
      const forced = await runtime.interact(write(id, { chars: "x\\r", screen: false, yield_time_ms: 1_000 }));
      assert.equal(forced.screen, undefined);
      assert.equal(forced.output.text, "x\n", "the stream since the previous call: the echo");
      const left = await runtime.interact(write(id, { chars: "y\\r", yield_time_ms: 5_000, until_pattern: "^after$" }));
      assert.equal(left.screen, undefined, "back to the stream once the program left the alternate screen");
      // A match may end at the unfinished line before its line end arrives (as a prompt does).
      assert.match(left.output.text, /after\n?$/);
      await runtime.shutdown();
    },
  );
});

describe("the screen view of a program that repaints the normal screen", () => {
  it(
    "shows the screen while it repaints, is not waiting for input meanwhile, and returns to the stream once the screen scrolls",
    pty,
    async () => {
      const runtime = new ExecRuntime();
      // Like top: paints by cursor addressing and reads its keys between paints; the call ends while it
      // sits in the read after its fifth paint. Then it prints a log that scrolls the screen.
      const paint = (i: number, wait: number) => `printf '\\033[Hframe ${i}\\033[K\\r\\nload 0.${i}\\033[K'; read -t ${wait} -n 1 key`;
      const frames = [1, 2, 3, 4].map((i) => paint(i, 0.2)).join("; ");
      const script = `printf '\\033[H\\033[2J'; ${frames}; ${paint(5, 4)}; seq 1 40; echo done; exec sleep 30`;
      const started = await runtime.exec(exec(script, { tty: true, cols: 40, rows: 10, until_quiet_ms: 700, yield_time_ms: 15_000 }));
      const id = runningId(started)!;
      assert.equal(started.screen?.repainting, true, started.output.text);
      assert.deepEqual(started.screen?.lines, ["frame 5", "load 0.5"]);
      assert.equal(started.inputWait?.likely ?? false, false, "it repaints by itself");
      const after = await runtime.interact(write(id, { yield_time_ms: 15_000, until_pattern: "^done$" }));
      assert.equal(after.screen, undefined, "back to the stream once its log scrolled the screen");
      assert.match(after.output.text, /\n40\ndone\n$/);
      await runtime.shutdown();
    },
  );
});

describe("the emulator behind a PTY job", () => {
  it("answers a cursor-position query into the terminal", pty, async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(
      exec(`printf '\\033[3;5H\\033[6n'; IFS= read -rs -d R reply; printf '\\nreply=%s\\n' "\${reply#??}"`, {
        tty: true,
        yield_time_ms: 10_000,
      }),
    );
    assert.equal(report.job.exit?.exitCode, 0, report.output.text);
    assert.match(report.output.text, /reply=3;5\n/);
    await runtime.shutdown();
  });

  it("follows a resize: the program redraws at the new size and the screen has it", pty, async () => {
    const runtime = new ExecRuntime();
    const script = `trap 'printf "\\033[H\\033[2Jsize %sx%s" $(tput cols) $(tput lines)' WINCH; echo ready; while :; do sleep 0.05; done`;
    const started = await runtime.exec(exec(script, { tty: true, cols: 80, rows: 24, until_pattern: "ready" }));
    const resized = await runtime.interact(
      write(runningId(started)!, { cols: 100, rows: 30, screen: true, yield_time_ms: 5_000, until_pattern: "size 100x30" }),
    );
    assert.equal(resized.waitEnd, "matched");
    assert.deepEqual([resized.screen?.cols, resized.screen?.rows], [100, 30]);
    assert.deepEqual(resized.screen?.lines, ["size 100x30"]);
    await runtime.shutdown();
  });

  it("pipe jobs have none: the human's view is the last 40 lines of the output", async () => {
    const job = jobs.start("seq 1 100");
    await untilExit(job);
    assert.equal(screenOf(job), undefined);
    assert.equal(await job.screenView(true), undefined);
    const view = await humanView(job);
    assert.equal(view.kind, "output");
    assert.deepEqual(
      view.kind === "output" ? view.lines : [],
      Array.from({ length: 40 }, (_, i) => String(61 + i)),
    );
  });

  it("a pipe job's view shows a spinner's last frame only, as a terminal would", async () => {
    const job = jobs.start(
      "printf '\\342\\240\\213 installing\\033[1G\\033[0K\\342\\240\\231 installing\\033[1G\\033[0Kadded 3 packages\\n'",
    );
    await untilExit(job);
    const view = await humanView(job);
    assert.deepEqual(view.kind === "output" ? view.lines : [], ["added 3 packages"]);
  });

  it("is freed once the job is final; the last screen stays for the exit's report and the human's view", pty, async () => {
    const job = jobs.start("printf 'last words'", { env: jobEnvironment(process.env, { tty: true }), terminal: { cols: 30, rows: 5 } });
    await untilExit(job);
    assert.equal(screenOf(job)?.closed, true);
    const view = await humanView(job);
    assert.deepEqual(view.kind === "screen" ? view.screen.lines : [], ["last words"]);
  });

  it("bounds the answers a program never reads, and drops the rest", pty, async () => {
    const job = jobs.start("stty raw -echo; for i in $(seq 1 40000); do printf '\\033[6n'; done; exec sleep 30", {
      env: jobEnvironment(process.env, { tty: true }),
      terminal: { cols: 80, rows: 24 },
    });
    const screen = screenOf(job)!;
    await waitFor(() => screen.droppedReplies > 0, "answers to be dropped", 20_000);
    assert.ok(screen.pendingReplyBytes <= SCREEN_REPLY_PENDING_BYTES, `${screen.pendingReplyBytes} bytes pending`);
    job.terminate("SIGKILL", "killed");
    await untilExit(job);
  });
});

describe("the exit's report shows the last screen", () => {
  it("with every byte the job printed (3 runs)", pty, async () => {
    const runtime = new ExecRuntime();
    for (let run = 0; run < 3; run++) await exitReportShowsLastScreen(runtime, dir, run);
    await runtime.shutdown();
  });
});
