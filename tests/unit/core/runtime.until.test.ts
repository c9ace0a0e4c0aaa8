/**
 * Waits that end when the work does, with real jobs through the runtime: a matched line (returned up
 * to and including it, the rest read by the next call, nothing lost or repeated), an unfinished
 * prompt, a line split across writes, the PTY echo, linear-time patterns, bad patterns refused
 * before anything runs, quiet, steering, and `input_wait`. The exact split at a match, 20 runs
 * beside CPU burners: `tests/stress/waits.test.ts`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { LogDirectory, logConfig } from "../../../src/core/log/job-log.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 20_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);

describe("until_pattern", () => {
  it("returns at the matched line with the output up to it; the next call reads exactly the rest", async () => {
    const runtime = new ExecRuntime();
    const t0 = performance.now();
    const first = await runtime.exec(
      exec("echo booting; sleep 1.5; echo 'server ready on :8080'; echo next-line; sleep 30", { until_pattern: "ready" }),
    );
    const took = performance.now() - t0;
    assert.equal(first.waitEnd, "matched");
    assert.equal(first.matchedLine, "server ready on :8080");
    assert.equal(first.output.text, "booting\nserver ready on :8080\n");
    assert.ok(took >= 1_400 && took < 10_000, `returned after ${Math.round(took)} ms`);
    const rest = await runtime.interact(write(runningId(first)!, { yield_time_ms: 5_000, until_pattern: "next" }));
    assert.equal(rest.output.text, "next-line\n", "the rest, once");
    await runtime.shutdown();
  });

  it("matches an unfinished prompt line, and a line split across two writes 300 ms apart once", async () => {
    const runtime = new ExecRuntime();
    const prompt = await runtime.exec(exec("printf 'Continue? [y/N] '; read answer; echo got $answer", { until_pattern: "\\[y/N\\] $" }));
    assert.equal(prompt.waitEnd, "matched");
    assert.equal(prompt.output.text, "Continue? [y/N] ");
    const split = await runtime.exec(exec("printf 'all systems '; sleep 0.3; printf 'go\\n'; sleep 30", { until_pattern: "systems go$" }));
    assert.equal(split.waitEnd, "matched");
    assert.equal(split.matchedLine, "all systems go");
    assert.equal(split.output.text, "all systems go\n");
    await runtime.shutdown();
  });

  it("matching starts with output already printed but not yet read", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(exec("sleep 0.5; echo one; echo READY; echo two; sleep 30", { yield_time_ms: 250 }));
    const id = runningId(started)!;
    assert.equal(started.output.text, "");
    const job = runtime.jobs().find((candidate) => candidate.id === id)!;
    await waitFor(() => job.outputBytesTotal >= "one\nREADY\ntwo\n".length, "the lines, unread");
    const matched = await runtime.interact(write(id, { yield_time_ms: 5_000, until_pattern: "(?i)ready" }));
    assert.equal(matched.waitEnd, "matched");
    assert.equal(matched.output.text, "one\nREADY\n");
    assert.ok(matched.wallMs < 1_000, "it matched at once");
    const after = await runtime.interact(write(id, { yield_time_ms: 5_000, until_pattern: "two" }));
    assert.equal(after.output.text, "two\n");
    await runtime.shutdown();
  });

  it("a catastrophic pattern for a backtracking engine, (a+)+$, answers in milliseconds", async () => {
    const runtime = new ExecRuntime();
    const t0 = performance.now();
    const report = await runtime.exec(exec(`printf '${"a".repeat(30)}!\\nend\\n'; sleep 30`, { until_pattern: "(a+)+$|^end$" }));
    assert.equal(report.matchedLine, "end");
    assert.ok(performance.now() - t0 < 5_000);
    await runtime.shutdown();
  });

  it("refuses an invalid or unsupported pattern before anything runs, naming the problem", async () => {
    const parent = (await import("node:fs")).mkdtempSync(`${(await import("node:os")).tmpdir()}/piue-until-`);
    const logs = new LogDirectory({ ...logConfig(), parent });
    const runtime = new ExecRuntime({ logs });
    for (const [pattern, why] of [
      ["(unclosed", /until_pattern/],
      ["(?=ahead)x", /look-?ahead/i],
      ["(a)\\1", /back-?reference/i],
      ["x".repeat(501), /500/],
    ] as const) {
      assert.throws(
        () => exec("touch should-not-exist", { until_pattern: pattern }),
        (error: Error) => {
          assert.ok(error instanceof ExecRequestError);
          assert.match(error.message, why);
          return true;
        },
      );
    }
    assert.throws(() => exec("true", { until_quiet_ms: 50 }), /until_quiet_ms must be a whole number of milliseconds from 100 to 60000/);
    assert.equal(existsSync("should-not-exist"), false);
    assert.deepEqual(runtime.jobs(), []);
    await runtime.shutdown();
  });
});

describe("PTY echo", { skip: SKIP_WITHOUT_PTY }, () => {
  it("the terminal's echo of what the call typed never matches; the command's own line does", async () => {
    const runtime = new ExecRuntime();
    const shell = await runtime.exec(
      exec("PS1='$ ' bash --norc --noprofile -i", { tty: true, yield_time_ms: 5_000, until_pattern: "\\$ $" }),
    );
    const id = runningId(shell)!;
    try {
      const typed = await runtime.interact(write(id, { chars: "echo rea''dy\\r", yield_time_ms: 10_000, until_pattern: "ready" }));
      assert.equal(typed.waitEnd, "matched");
      assert.equal(typed.matchedLine, "ready");
      // Never the next prompt (until-match-cut.test.ts forces the interleavings). The line end may be
      // missing: a terminal can hand `ready` over before its line end, and an unfinished line matches.
      assert.match(typed.output.text, /^echo rea''dy\nready\n?$/);
      // The next prompt is read first: read in one piece with the next echo, it would be one line with it
      // (`$ echo ready`), which no filter can tell from output that merely contains the typed text.
      const prompt = await runtime.interact(write(id, { yield_time_ms: 10_000, until_pattern: "\\$ $" }));
      assert.equal(prompt.waitEnd, "matched");
      const again = await runtime.interact(write(id, { chars: "echo ready\\r", yield_time_ms: 10_000, until_pattern: "ready" }));
      assert.equal(again.matchedLine, "ready", "the echoed command line contains the word too, and is skipped");
    } finally {
      // A failed assertion must not leave the interactive shell holding the test file open.
      await runtime.shutdown();
    }
  });
});

describe("until_quiet_ms", () => {
  it("returns once a job that printed for a while goes quiet", async () => {
    const runtime = new ExecRuntime();
    const t0 = performance.now();
    const report = await runtime.exec(exec("for i in 1 2 3 4 5; do echo tick $i; sleep 0.4; done; sleep 30", { until_quiet_ms: 800 }));
    const took = performance.now() - t0;
    assert.equal(report.waitEnd, "quiet");
    assert.equal(report.output.text, "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n");
    assert.ok(took >= 2_300 && took < 15_000, `returned after ${Math.round(took)} ms`);
    await runtime.shutdown();
  });

  it("a slow starter is not quiet before its first byte", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(exec("sleep 1; echo late; sleep 30", { until_quiet_ms: 300 }));
    assert.equal(report.waitEnd, "quiet");
    assert.equal(report.output.text, "late\n");
    await runtime.shutdown();
  });
});

describe("steering", () => {
  it("a steer ends every attached wait at once with the output so far; the job runs on and its wake stays armed", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(exec("echo up; sleep 60", { yield_time_ms: 300 }), { onExit: "wake" });
    const id = runningId(started)!;
    const t0 = performance.now();
    const poll = runtime.interact(write(id, { yield_time_ms: 60_000 }));
    setTimeout(() => runtime.steer(), 300);
    const steered = await poll;
    assert.equal(steered.waitEnd, "steered");
    assert.ok(performance.now() - t0 < 2_000);
    assert.equal(steered.job.exit, undefined, "the job runs on");
    assert.equal(steered.wake, "armed");
    await runtime.shutdown();
  });
});

describe("input_wait", () => {
  const waits = (cmd: string, tty = false) =>
    (async () => {
      const runtime = new ExecRuntime();
      const report = await runtime.exec(exec(cmd, { tty, yield_time_ms: 1_800 }));
      await runtime.shutdown();
      return report.inputWait;
    })();

  it("says likely for a read with a prompt, on pipes and on a PTY, and names the signal", async () => {
    for (const tty of SKIP_WITHOUT_PTY ? [false] : [false, true]) {
      for (const cmd of ["read -p 'Name: ' name; echo $name", `python3 -c 'input("x? ")'`]) {
        const wait = await waits(cmd, tty);
        assert.equal(wait?.likely, true, `${cmd} (tty ${tty})`);
        assert.ok(wait?.reason, "a reason");
      }
    }
  });

  it("never for sleep, a CPU loop, or a pipe between the job's own processes", async () => {
    for (const cmd of ["sleep 5", "while :; do :; done", "sleep 5 | cat"]) {
      assert.equal(await waits(cmd), undefined, cmd);
    }
  });
});
