/**
 * Ports and memory through the runtime with real servers (Linux reads /proc): a server on a port
 * another job holds names that job, one held outside Pi names the pid and command, and so does the
 * exit wake; a kill says which ports are free (a bind right after succeeds) or still held; an
 * `until_listening` URL returns only once the server answers; bad URLs start nothing; a server that
 * closes its port while it runs is deaf in listings and wakes once per loss; a job's processes start
 * with a raised `oom_score_adj` (Pi's stays); a listing shows a job's memory; a job over the cap is
 * stopped with `killed_by: memory` and one wake.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { freePort } from "../../helpers/bind-server.ts";
import { processAlive, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes, scratchDirectory, shutDownAfter } from "../../helpers/runtime.ts";
import { bindsNow, memoryGrower, memoryHolder, nodeServer, outsideHolder, pythonServer } from "../../helpers/servers.ts";

const SKIP = process.platform !== "linux" && "reads /proc (Linux)";
const dir = scratchDirectory("ports-");
const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 10_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);
const MB = 1024 * 1024;

describe("the port a job cannot get", { skip: SKIP }, () => {
  const runtime = shutDownAfter()(new ExecRuntime());

  it("a second server on a port a job holds names that job and its command; nothing is killed", async () => {
    const port = await freePort();
    const first = await runtime.exec(exec(nodeServer(port), { until_listening: port }));
    const holder = runningId(first)!;
    const second = await runtime.exec(exec(nodeServer(port)));
    assert.ok(second.job.exit, "the second server failed");
    assert.deepEqual(second.portConflicts, [
      {
        port,
        pid: second.portConflicts![0]!.pid,
        command: second.portConflicts![0]!.command,
        job: { jobId: holder, command: nodeServer(port) },
      },
    ]);
    assert.ok(
      runtime.jobs().some((job) => job.id === holder && !job.exit),
      "the holder runs on",
    );
    await runtime.kill(holder, "SIGKILL");
  });

  it("a port held outside Pi names the pid and its command line (Python's failure names no port: the command's)", async () => {
    const port = await freePort();
    const holder = await outsideHolder(port);
    try {
      const report = await runtime.exec(exec(pythonServer(port)));
      assert.match(report.output.text, /Address already in use/);
      const [conflict] = report.portConflicts ?? [];
      assert.equal(conflict?.port, port);
      assert.equal(conflict?.pid, holder.child.pid);
      assert.match(conflict?.command ?? "", /node -e .*listen\(/);
      assert.equal(conflict?.job, undefined, "not a job of this Pi");
    } finally {
      holder.stop();
    }
  });

  it("the exit wake of a server that could not get its port names the holder", async () => {
    const { runtime: woken, batches } = runtimeWithWakes();
    try {
      const port = await freePort();
      const first = await woken.exec(exec(nodeServer(port), { until_listening: port }));
      const second = await woken.exec(exec(`sleep 0.5; ${nodeServer(port)}`, { yield_time_ms: 250 }), { onExit: "wake" });
      await waitFor(() => batches.length > 0, "the exit wake");
      const [wake] = batches[0]!.jobs;
      assert.equal(wake?.jobId, runningId(second));
      assert.match(wake?.reason ?? "", new RegExp(`port_conflict: ${port} held by session ${runningId(first)} \\(node -e`));
    } finally {
      await woken.shutdown();
    }
  });
});

describe("the port a job gives back", { skip: SKIP }, () => {
  const runtime = shutDownAfter()(new ExecRuntime());

  it("kill_session of a server says its port is released, and a bind right after succeeds", async () => {
    const port = await freePort();
    const started = await runtime.exec(exec(nodeServer(port), { until_listening: port }));
    const report = await runtime.kill(runningId(started)!, "SIGTERM");
    assert.deepEqual(report.portsReleased, [port]);
    assert.equal(report.portsStillHeld, undefined);
    assert.equal(await bindsNow(port), true);
  });

  it("a port a process that left the job's session keeps is still held, by its pid", async () => {
    const port = await freePort();
    const started = await runtime.exec(exec(`setsid ${nodeServer(port)} & wait`, { until_listening: port }));
    const report = await runtime.kill(runningId(started)!, "SIGKILL");
    const [held] = report.portsStillHeld ?? [];
    assert.equal(held?.port, port);
    assert.ok(held?.pid && processAlive(held.pid));
    assert.match(held?.command ?? "", /node -e/);
    process.kill(held!.pid!, "SIGKILL");
  });

  it("a job that never listened says nothing of ports", async () => {
    const started = await runtime.exec(exec("sleep 30", { yield_time_ms: 250 }));
    const report = await runtime.kill(runningId(started)!, "SIGKILL");
    assert.equal(report.portsReleased, undefined);
    assert.equal(report.portsStillHeld, undefined);
  });
});

describe("ready means it answers", { skip: SKIP }, () => {
  const runtime = shutDownAfter()(new ExecRuntime());

  it("a URL returns only once a server that binds then compiles for 2 s answers, with its status", async () => {
    const port = await freePort();
    const started = performance.now();
    const report = await runtime.exec(exec(nodeServer(port, 2_000), { until_listening: `http://127.0.0.1:${port}/health` }));
    assert.equal(report.waitEnd, "listening");
    assert.equal(report.httpStatus, 200);
    assert.ok(performance.now() - started >= 2_000, "not at the bind");
    assert.match(report.output.text, /bound \d+\nready/);
    await runtime.kill(runningId(report)!, "SIGKILL");
  });

  it("a path asks the job's own port: Python's http.server answers /; a 404 is an answer too; write_stdin waits the same", async () => {
    const port = await freePort();
    const python = await runtime.exec(exec(pythonServer(port), { until_listening: "/" }));
    assert.equal(python.httpStatus, 200);
    await runtime.kill(runningId(python)!, "SIGKILL");
    const other = await freePort();
    const waiting = await runtime.exec(exec(`read go; ${nodeServer(other)}`, { yield_time_ms: 250 }));
    const report = await runtime.interact(write(runningId(waiting)!, { chars: "\n", yield_time_ms: 10_000, until_listening: "/missing" }));
    assert.equal(report.waitEnd, "listening");
    assert.equal(report.httpStatus, 404);
    await runtime.kill(runningId(waiting)!, "SIGKILL");
  });

  it("another host, another scheme or junk is refused before anything runs", () => {
    const marker = join(dir, "never-spawned");
    for (const value of ["http://example.com/", "https://127.0.0.1:3000/", "file:///etc/passwd", "ready"]) {
      assert.throws(() => exec(`touch ${marker}`, { until_listening: value }), ExecRequestError);
      assert.throws(() => write(1, { until_listening: value }), /Nothing was written\.$/);
    }
    assert.equal(existsSync(marker), false);
  });
});

describe("a server that goes deaf", { skip: SKIP }, () => {
  it("closing its port while it runs shows in the listing after 2 s and wakes once per loss, again after it listened again", async () => {
    const { runtime, batches } = runtimeWithWakes();
    try {
      const port = await freePort();
      const started = await runtime.exec(exec(nodeServer(port), { until_listening: port }), { onExit: "wake" });
      const id = runningId(started)!;
      const deafWakes = () => batches.flatMap((batch) => batch.deaf ?? []);
      await runtime.interact(write(id, { chars: "\n", until_pattern: "closed" }));
      const closedAt = performance.now();
      await waitFor(() => deafWakes().length === 1, "the deaf notice", 15_000, 50);
      assert.ok(performance.now() - closedAt >= 2_000, "not before 2 s");
      assert.deepEqual(deafWakes()[0]?.was, [`127.0.0.1:${port}`]);
      const listed = runtime.list().find((job) => job.jobId === id);
      assert.deepEqual(listed?.listening, []);
      assert.deepEqual(listed?.deaf?.was, [`127.0.0.1:${port}`]);
      // Two more looks of the monitor: the same loss is not told again.
      const ticks = runtime.monitor.ticks;
      await waitFor(() => runtime.monitor.ticks >= ticks + 2, "two more looks", 10_000, 50);
      assert.equal(deafWakes().length, 1);
      assert.equal(runtime.completions.waiting, 0);
      await runtime.interact(write(id, { chars: "\n", until_listening: port }));
      await runtime.interact(write(id, { chars: "\n", until_pattern: "closed" }));
      await waitFor(() => deafWakes().length === 2, "the second loss's notice", 15_000, 50);
      await runtime.kill(id, "SIGKILL");
    } finally {
      await runtime.shutdown();
    }
  });
});

describe("a job's memory and the kernel's choice", { skip: SKIP }, () => {
  const runtime = shutDownAfter()(new ExecRuntime());

  it("every spawn path (a direct spawn, a warm shell, a PTY) starts the job's processes with a raised oom_score_adj; Pi's own is untouched", async () => {
    const pi = readFileSync("/proc/self/oom_score_adj", "utf8").trim();
    const raised = String(Math.min(1000, Number(pi) + 500));
    const own = new ExecRuntime();
    try {
      const read = "sleep 0.2 | cat & cat /proc/self/oom_score_adj; wait";
      const direct = await own.exec(exec(read));
      assert.equal(own.warmShells.counts.handed, 0, "the first job spawns directly");
      await waitFor(() => own.warmShells.idle !== undefined, "a warm shell");
      const warm = await own.exec(exec(read));
      assert.equal(own.warmShells.counts.handed, 1, "the second goes to the warm shell");
      const pty = await own.exec(exec(read, { tty: true }));
      for (const [path, report] of Object.entries({ direct, warm, pty })) assert.equal(report.output.text.trim(), raised, path);
    } finally {
      await own.shutdown();
    }
    assert.equal(readFileSync("/proc/self/oom_score_adj", "utf8").trim(), pi);
  });

  it("a listing shows a 200 MB job's memory within 20 %, and its CPU time", async () => {
    const started = await runtime.exec(exec(memoryHolder(200), { until_pattern: "holding" }));
    const listed = runtime.list().find((job) => job.jobId === runningId(started));
    const mb = (listed?.usage?.rssBytes ?? 0) / MB;
    assert.ok(mb >= 160 && mb <= 240, `${mb.toFixed(0)} MB`);
    assert.ok((listed?.usage?.cpuMs ?? -1) >= 0);
    assert.ok(started.usageChanged, "its first result said it");
    await runtime.kill(runningId(started)!, "SIGKILL");
  });

  it("the monitor watches a job from its spawn: a look before the job is published (its first 150 ms) keeps watching", async () => {
    const own = new ExecRuntime();
    try {
      const started = own.exec(exec("sleep 30", { yield_time_ms: 1_000 }));
      const tracked = (own as unknown as { tracked: { size: number } }).tracked;
      while (tracked.size === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(own.jobs().length, 0, "not published yet");
      const ticks = own.monitor.ticks;
      own.monitor.tick();
      assert.equal(own.monitor.ticks, ticks + 1, "the look saw the job");
      await started;
      await waitFor(() => own.monitor.ticks > ticks + 1, "the next look", 5_000, 20);
    } finally {
      await own.shutdown();
    }
  });

  it("a job that grows past a 300 MB cap is stopped within 2 s with killed_by memory and the figure, and wakes once", async () => {
    const saved = process.env.PI_UNIFIED_EXEC_MAX_JOB_RSS_MB;
    process.env.PI_UNIFIED_EXEC_MAX_JOB_RSS_MB = "300";
    const { runtime: capped, batches } = runtimeWithWakes();
    if (saved === undefined) delete process.env.PI_UNIFIED_EXEC_MAX_JOB_RSS_MB;
    else process.env.PI_UNIFIED_EXEC_MAX_JOB_RSS_MB = saved;
    try {
      const stamp = join(dir, "crossed");
      const started = await capped.exec(exec(memoryGrower(50, 0.25, 250, stamp), { yield_time_ms: 250 }), { onExit: "wake" });
      const job = capped.jobs().find((candidate) => candidate.id === runningId(started))!;
      await waitFor(() => job.exit !== undefined, "the stop", 15_000, 20);
      const stopped = Date.now();
      const crossed = Number(readFileSync(stamp, "utf8").split("\n")[0]);
      assert.ok(stopped - crossed <= 2_000, `stopped ${stopped - crossed} ms after it crossed the cap`);
      assert.equal(job.exit?.stoppedBy, "memory");
      assert.match(job.exit?.failure ?? "", /stopped at \d+ MB of resident memory, over the 300 MB cap \(PI_UNIFIED_EXEC_MAX_JOB_RSS_MB\)/);
      await waitFor(() => batches.length > 0, "the exit wake");
      const ticks = capped.monitor.ticks;
      await waitFor(() => capped.monitor.ticks > ticks || capped.jobs().every((each) => each.exit), "a settled monitor");
      assert.deepEqual(
        batches.flatMap((batch) => batch.jobs.map((wake) => wake.jobId)),
        [job.id],
      );
      assert.match(batches[0]!.jobs[0]!.reason ?? "", /over the 300 MB cap/);
    } finally {
      await capped.shutdown();
    }
  });
});

after(() => undefined);
