/**
 * A PTY job's shell runs as the child of a wrapper that leads the terminal's session (Linux,
 * `HOLDER` in fd-hygiene.ts), and the job reads as if the shell led it: codes 129–160 written by
 * hand stay codes, Ctrl-C and the signals `kill_session` sends read as those signals, a SIGSTOP from
 * outside holds until continued while Ctrl-Z is undone, the job's processes keep SIGHUP's default
 * (nothing in the job needs it ignored), and an exported SHELLOPTS gets no wrapper (it would hand
 * the shell job control).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ptyCommand } from "../../../src/core/processes/fd-hygiene.ts";
import { procStat } from "../../../src/core/processes/process-table.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";
import { shutDownAfter } from "../../helpers/runtime.ts";

const LINUX_PTY = process.platform !== "linux" ? "the wrapper runs on Linux only" : SKIP_WITHOUT_PTY;
const keep = shutDownAfter();
const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, tty: true, yield_time_ms: 5_000, ...extra }, process.cwd(), process.env);
const write = (id: number, chars: string) => prepareWrite({ session_id: id, chars, yield_time_ms: 5_000 }, process.env);
/** A program that ticks for 30 s; `exit`: one whose SIGCONT handler exits 5 at once. */
const stoppable = (onContinue: "exit" | "run") => `exec python3 -c 'import os, signal, time
if "${onContinue}" == "exit": signal.signal(signal.SIGCONT, lambda *a: os._exit(5))
print(os.getpid(), flush=True)
for i in range(120): print("tick", i, flush=True); time.sleep(0.25)'`;
const stateOf = (pid: number) => procStat(pid)?.[0];
/** The terminal's foreground group is the process's own (the fields after the name: pgrp third, tpgid sixth). */
function foregroundIs(pid: number): boolean {
  const fields = procStat(pid);
  return fields !== undefined && fields[2] === fields[5];
}

describe("a PTY job under the wrapper that leads its session", { skip: LINUX_PTY }, () => {
  const runtime = keep(new ExecRuntime());

  /** A ticking program started on a PTY, then stopped by a SIGSTOP from outside the job. */
  async function stoppedFromOutside(onContinue: "exit" | "run") {
    const started = await runtime.exec(exec(stoppable(onContinue), { until_pattern: "^tick 1" }));
    const pid = pidsIn(started.output.text)[0]!;
    process.kill(pid, "SIGSTOP");
    await waitFor(() => stateOf(pid) === "T", "the stop");
    return { id: runningId(started)!, pid };
  }

  it("codes 129–160 a shell exits with stay codes: `exit 137`, pipefail's 141, `exit 130`", async () => {
    for (const [cmd, code] of [
      ["exit 137", 137],
      ["set -o pipefail; yes | head -1 > /dev/null", 141],
      ["exit 130", 130],
      ["exit 147", 147],
    ] as const) {
      const report = await runtime.exec(exec(cmd));
      assert.deepEqual([report.job.exit?.exitCode, report.job.exit?.signal], [code, null], cmd);
    }
  });

  it("Ctrl-C reads as SIGINT; a trap that exits 130 on it reads as code 130", async () => {
    for (const [cmd, signal] of [
      ["echo ready; sleep 30; echo after", "SIGINT"],
      ["trap 'exit 130' INT; echo ready; sleep 30", null],
    ] as const) {
      const id = runningId(await runtime.exec(exec(cmd, { until_pattern: "^ready" })))!;
      const report = await runtime.interact(write(id, "\\x03"));
      assert.deepEqual([report.job.exit?.exitCode, report.job.exit?.signal], [130, signal], cmd);
      assert.doesNotMatch(report.output.text, /after/);
    }
  });

  it("kill_session's signals read as those signals; SIGHUP now ends a PTY job as it does one on pipes", async () => {
    for (const signal of ["SIGTERM", "SIGHUP", "SIGQUIT", "SIGINT"] as const) {
      const id = runningId(await runtime.exec(exec("echo ready; exec sleep 30", { until_pattern: "^ready" })))!;
      const killed = await runtime.kill(id, signal);
      assert.equal(killed.job.exit?.signal, signal, JSON.stringify(killed.job.exit));
    }
  });

  it("a program that handles the signal it is sent ends as it chooses: a TERM trap that exits 3 reads as code 3", async () => {
    const id = runningId(await runtime.exec(exec("trap 'exit 3' TERM; echo ready; sleep 30 & wait", { until_pattern: "^ready" })))!;
    const killed = await runtime.kill(id, "SIGTERM");
    assert.deepEqual([killed.job.exit?.exitCode, killed.job.exit?.signal], [3, null]);
  });

  it("a SIGSTOP from outside holds the job, Ctrl-C meanwhile included; continued, it ends with its own code, even at once", async () => {
    const { id, pid } = await stoppedFromOutside("exit");
    const held = await runtime.interact(write(id, "\\x03"));
    assert.equal(held.job.exit, undefined, "still there, stopped");
    assert.equal(stateOf(pid), "T");
    // Its SIGCONT handler exits 5 at once: the end lands while the wrapper still waits for the continue.
    process.kill(pid, "SIGCONT");
    const ended = await runtime.interact(prepareWrite({ session_id: id, yield_time_ms: 10_000 }, process.env));
    assert.deepEqual([ended.job.exit?.exitCode, ended.job.exit?.signal], [5, null]);
  });

  it("continued after a SIGSTOP, the job has the terminal again: Ctrl-C reaches it", async () => {
    const { id, pid } = await stoppedFromOutside("run");
    process.kill(pid, "SIGCONT");
    await waitFor(() => foregroundIs(pid), "the terminal given back", 10_000);
    const report = await runtime.interact(write(id, "\\x03"));
    assert.deepEqual([report.job.exit?.exitCode, report.job.exit?.signal], [130, "SIGINT"], report.output.text);
  });

  it("Ctrl-Z is undone at once: nothing else could resume the job", async () => {
    const id = runningId(await runtime.exec(exec("echo ready; sleep 1; echo done", { until_pattern: "^ready" })))!;
    const report = await runtime.interact(prepareWrite({ session_id: id, chars: "\\x1a", yield_time_ms: 10_000 }, process.env));
    assert.deepEqual([report.job.exit?.exitCode, report.job.exit?.signal], [0, null]);
    assert.match(report.output.text, /done$/m);
  });

  it("a typed Ctrl-\\ reads as SIGQUIT", async () => {
    const id = runningId(await runtime.exec(exec("echo ready; exec sleep 30", { until_pattern: "^ready" })))!;
    const report = await runtime.interact(write(id, "\\x1c"));
    assert.deepEqual([report.job.exit?.exitCode, report.job.exit?.signal], [131, "SIGQUIT"]);
  });

  it("the job's processes keep SIGHUP's default: no wrapper in the job needs it ignored", async () => {
    const report = await runtime.exec(exec("grep SigIgn /proc/self/status; sleep 30 & echo $!"));
    const ignored = BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(report.output.text)![1]}`);
    assert.equal(ignored & 1n, 0n, "SIGHUP (bit 0) is not ignored");
    const [sleeper] = pidsIn(report.output.text.split("\n").slice(1).join("\n"));
    await runtime.kill(report.job.jobId, "SIGHUP");
    await waitFor(() => !processAlive(sleeper!), "the background sleep to end by SIGHUP");
  });

  it("an exported SHELLOPTS or BASHOPTS gets no wrapper: bash would hand the shell `-m`", () => {
    assert.equal(ptyCommand("/bin/bash", ["-c", "true"], { SHELLOPTS: "braceexpand" }, "linux").holds, false);
    assert.equal(ptyCommand("/bin/bash", ["-c", "true"], { BASHOPTS: "extglob" }, "linux").holds, false);
    assert.equal(ptyCommand("/bin/bash", ["-c", "true"], {}, "linux").holds, true);
  });

  it("a shutdown reads each job's own end: a TERM trap's `exit 7`, a plain program's SIGTERM", async () => {
    const own = new ExecRuntime();
    const trapped = runningId(await own.exec(exec("trap 'exit 7' TERM; echo ready; sleep 30 & wait", { until_pattern: "^ready" })))!;
    const plain = runningId(await own.exec(exec("echo ready; exec sleep 30", { until_pattern: "^ready" })))!;
    const jobs = own.jobs().filter((job) => job.id === trapped || job.id === plain);
    await own.shutdown();
    // The exit's report comes from node-pty's waiter thread, maybe after the groups are seen empty.
    await waitFor(() => jobs.every((job) => job.exit !== undefined), "the exits after the shutdown");
    const exits = Object.fromEntries(jobs.map((job) => [job.id, [job.exit?.exitCode, job.exit?.signal]]));
    assert.deepEqual(exits, { [trapped]: [7, null], [plain]: [143, "SIGTERM"] });
  });
});
