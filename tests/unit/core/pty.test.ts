import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Job } from "../../../src/core/job/job.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { loadPtyModule } from "../../../src/core/transport/pty.ts";
import { ptyJobs, StartedJobs, untilExit } from "../../helpers/jobs.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";
import { PTY_LOAD_ERROR, SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { ptyLinesThroughASlowDisk } from "../../helpers/transports.ts";

const jobs = new StartedJobs();

const { start: startPty, seen } = ptyJobs(jobs);
/** A send's window: generous, the writes here are small. */
const soon = () => performance.now() + 15_000;
const send = (job: Job, text: string) => job.send({ kind: "bytes", bytes: Buffer.from(text) }, soon());

describe("PTY module", () => {
  it("loads (with EXPECT_PTY=1 a missing module fails this test instead of skipping PTY tests)", { skip: SKIP_WITHOUT_PTY }, () => {
    assert.equal(PTY_LOAD_ERROR, undefined, PTY_LOAD_ERROR);
  });

  it("a module that cannot load is a clear error saying why and how to fix it", () => {
    assert.throws(
      () => loadPtyModule({ PI_UNIFIED_EXEC_PTY_MODULE: "no-such-pty-module" }),
      (error: Error) => {
        assert.match(error.message, /tty: true needs the PTY module no-such-pty-module, which could not be loaded: Cannot find module/);
        assert.match(error.message, /pipes \(tty: false\) still work/);
        assert.match(error.message, /reinstall pi-unified-exec with its optional dependencies/);
        return true;
      },
    );
  });
});

describe("Job on a PTY", { skip: SKIP_WITHOUT_PTY }, () => {
  it("is a terminal: isatty, TERM, and the size it was given", async () => {
    const job = startPty("[ -t 0 ] && [ -t 1 ] && echo tty; echo $TERM; stty size", 100, 40);
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
    assert.equal(seen(job), "tty\nxterm-256color\n40 100\n");
    assert.equal(job.tty, true);
  });

  it("drives a Python REPL with \\r", async () => {
    const job = startPty("python3 -q");
    await waitFor(() => seen(job).includes(">>> "), "the prompt");
    await send(job, "print(6*7)\r");
    await waitFor(() => seen(job).includes("42\n"), "the answer");
    await send(job, "exit()\r");
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
  });

  it("resizes live: the child sees the new size", async () => {
    const job = startPty("stty size; read line; stty size", 100, 40);
    await waitFor(() => seen(job).includes("40 100\n"), "the first size");
    job.resize({ cols: 90, rows: 20 });
    assert.deepEqual(job.terminalSize, { cols: 90, rows: 20 });
    await send(job, "\r");
    await untilExit(job);
    assert.match(seen(job), /40 100\n\n20 90\n$/);
  });

  it("Ctrl-C goes through the line discipline and interrupts the foreground job", async () => {
    const job = startPty("echo ready; sleep 30");
    await waitFor(() => seen(job).includes("ready"), "ready");
    assert.deepEqual(
      await job.send({ kind: "interrupt" }, soon()),
      { input: "bytes", sentBytes: 1 },
      "on a PTY the byte is written, not a signal sent",
    );
    await untilExit(job);
    assert.deepEqual(job.exit, { exitCode: 130, signal: "SIGINT" });
  });

  it("Ctrl-D ends input through the line discipline", async () => {
    const job = startPty("cat; echo after-eof");
    await send(job, "line\r");
    await waitFor(() => seen(job).includes("line\nline\n"), "the echo and cat's copy");
    await job.send({ kind: "eof" }, soon());
    await untilExit(job);
    assert.match(seen(job), /after-eof\n$/);
  });

  it("reports the exit at once when a descendant that left the job keeps the terminal open", async () => {
    // A process of a session of its own is not the job's (a plain `&` would keep the job), but it holds the terminal.
    const job = startPty(`python3 -c "import os, time; os.setsid(); time.sleep(5)" & echo $!; exit 3`);
    const t0 = performance.now();
    await untilExit(job);
    assert.ok(performance.now() - t0 < 2_000, `took ${performance.now() - t0} ms`);
    assert.equal(job.exit?.exitCode, 3);
    const [daemon] = pidsIn(seen(job));
    if (daemon) jobs.pid(daemon);
  });

  it("logs the raw terminal bytes", async () => {
    const job = startPty("printf 'a\\033[31mb\\n'");
    await untilExit(job);
    const { readFileSync } = await import("node:fs");
    assert.equal(readFileSync(job.logPath, "latin1"), "a\x1b[31mb\r\n");
    assert.equal(seen(job), "ab\n");
  });
});

describe("PTY jobs: nothing lost, nothing left", { skip: SKIP_WITHOUT_PTY }, () => {
  it("the last numbered line is in the result and in the log, byte for byte, with a slow disk", async () => {
    await ptyLinesThroughASlowDisk();
  });

  it("a kill reaches every process group of the terminal's session: an interactive shell's background job too", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(
      prepareExec({ cmd: "bash --norc --noprofile -i", tty: true, yield_time_ms: 1_000 }, process.cwd(), process.env),
    );
    const id = started.job.jobId;
    const bg = await runtime.interact({
      jobId: id,
      input: { kind: "bytes", bytes: Buffer.from("sleep 90 & echo BG=$!\r") },
      window: { ms: 1_000 },
    });
    const pid = Number(/BG=(\d+)/.exec(bg.output.text)?.[1]);
    assert.ok(processAlive(pid), "the background job runs in its own process group");
    const killed = await runtime.kill(id, "SIGTERM");
    assert.equal(killed.termination.cleanup, "confirmed");
    assert.equal(processAlive(pid), false, "the background job was stopped with its shell");
    await runtime.shutdown();
  });

  it("shutdown stops an interactive shell's background jobs too", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(
      prepareExec({ cmd: "bash --norc --noprofile -i", tty: true, yield_time_ms: 1_000 }, process.cwd(), process.env),
    );
    const bg = await runtime.interact({
      jobId: started.job.jobId,
      input: { kind: "bytes", bytes: Buffer.from("sleep 90 & echo BG=$!\r") },
      window: { ms: 1_000 },
    });
    const pid = Number(/BG=(\d+)/.exec(bg.output.text)?.[1]);
    assert.ok(processAlive(pid));
    const report = await runtime.shutdown();
    assert.deepEqual(report.survivors, []);
    assert.equal(processAlive(pid), false);
  });
});
