import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, describe, it } from "node:test";
import { LOG_TAIL_BUDGET_BYTES, LOG_TAIL_BYTES, RUNTIME_LOG_QUOTA_ENV } from "../../../src/core/constants.ts";
import { Job } from "../../../src/core/job.ts";
import { LogDirectory } from "../../../src/core/job-log.ts";
import { logConfig } from "../../../src/core/log-settings.ts";
import { aliveGroups } from "../../../src/core/process-group.ts";
import { prepareExec } from "../../../src/core/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { currentShellHost, resolveShell } from "../../../src/core/shell.ts";
import { waitForExit } from "../../../src/core/wait.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";

const bash = resolveShell("bash", currentShellHost());
/** A process that leaves its process group and session (portable: macOS has no `setsid` command). */
const ESCAPE_GROUP = `python3 -c "import os; os.setsid(); print(os.getpid(), flush=True); os.execvp('sleep', ['sleep', '300'])"`;
const started: Job[] = [];
const escaped: number[] = [];
let nextId = 1;

function start(command: string, options: { timeoutMs?: number; logs?: LogDirectory } = {}): Job {
  const job = new Job({
    id: nextId++,
    command,
    file: bash.path,
    args: ["-c", command],
    cwd: process.cwd(),
    env: process.env,
    logs: options.logs ?? new LogDirectory(),
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  started.push(job);
  return job;
}
const untilExit = (job: Job, timeoutMs = 20_000) => waitForExit(job, performance.now() + timeoutMs);
const request = (cmd: string, yieldMs = 300) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);

after(() => {
  for (const job of started) if (job.pgid && aliveGroups([job.pgid]).length) job.signal("SIGKILL");
  for (const pid of escaped) if (processAlive(pid)) process.kill(pid, "SIGKILL");
});

describe("stopping a job", () => {
  it("SIGTERM ends a plain job without escalation; cleanup is confirmed", async () => {
    const job = start("sleep 300");
    await waitFor(() => job.pid !== undefined, "spawn");
    const stop = await job.terminate("SIGTERM", "killed");
    assert.deepEqual(stop, { signal: "SIGTERM", escalated: false, cleanup: "confirmed", survivors: [] });
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" });
  });

  it("escalates to SIGKILL after 2 s when the job ignores SIGTERM", async () => {
    const job = start("trap '' TERM; echo ready; sleep 300 & wait");
    await waitFor(() => job.outputBytesTotal > 0, "ready");
    const t0 = performance.now();
    const stop = await job.terminate("SIGTERM", "killed");
    const took = performance.now() - t0;
    assert.equal(stop.escalated, true);
    assert.equal(stop.cleanup, "confirmed");
    assert.equal(job.exit?.signal, "SIGKILL");
    assert.ok(took >= 1_900 && took < 4_000, `took ${took} ms`);
  });

  it("SIGKILL skips the grace", async () => {
    const job = start("trap '' TERM; sleep 300");
    await waitFor(() => job.pid !== undefined, "spawn");
    const t0 = performance.now();
    const stop = await job.terminate("SIGKILL", "killed");
    assert.equal(stop.escalated, false);
    assert.ok(performance.now() - t0 < 1_500);
    assert.equal(job.exit?.exitCode, 137);
  });

  it("a grandchild that escaped with setsid makes the cleanup unconfirmed, never confirmed", async () => {
    // The grandchild prints its pid once it has left the group (setsid), then becomes `sleep`.
    const job = start(`${ESCAPE_GROUP} & sleep 300`);
    await waitFor(() => job.outputBytesTotal > 0, "the grandchild's pid");
    const [grandchild] = pidsIn(job.takeOutput().text);
    assert.ok(grandchild);
    escaped.push(grandchild);
    const stop = await job.terminate("SIGTERM", "killed");
    assert.equal(stop.cleanup, "unconfirmed");
    assert.deepEqual(stop.survivors, [grandchild]);
    assert.ok(processAlive(grandchild), "the escaped process is out of the group's reach");
  });

  it("stops a job at its hard deadline, whether or not anyone waits", async () => {
    const job = start("echo started; sleep 300", { timeoutMs: 400 });
    const t0 = performance.now();
    await untilExit(job);
    assert.ok(performance.now() - t0 < 3_000);
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" });
  });

  it("a job that ends before its deadline is not marked as stopped", async () => {
    const job = start("true", { timeoutMs: 1_000 });
    await untilExit(job);
    assert.deepEqual(job.exit, { exitCode: 0, signal: null });
  });
});

describe("log quotas", () => {
  const config = (over: Partial<ReturnType<typeof logConfig>>) => ({ ...logConfig({}), parent: tmpdir(), ...over });

  it("at the job quota the log gets a marker, keeps running, and gets the tail at exit", async () => {
    const logs = new LogDirectory(config({ jobQuotaBytes: 100_000 }));
    const job = start("head -c 20000000 /dev/zero | tr '\\0' x; echo; echo the-very-end", { logs });
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
    assert.match(job.logPartialReason ?? "", /log quota reached: 100000 bytes per job/);
    const log = readFileSync(job.logPath, "latin1");
    assert.ok(statSync(job.logPath).size <= 100_000 + LOG_TAIL_BYTES + 1_000, `log is ${statSync(job.logPath).size} bytes`);
    assert.ok(log.startsWith("x".repeat(1000)));
    assert.match(log, /\[pi-unified-exec: log quota reached: 100000 bytes per job\. Later output is not logged/);
    assert.match(log, /\[pi-unified-exec: \d+ bytes were not logged; the last 524288 of them follow\.\]\n/);
    assert.ok(log.endsWith("x\nthe-very-end\n"), "the tail keeps the end of the stream");
  });

  it("the runtime quota is shared by all jobs", async () => {
    const logs = new LogDirectory(config({ runtimeQuotaBytes: 150_000 }));
    const first = start("head -c 100000 /dev/zero", { logs });
    await untilExit(first);
    assert.equal(first.logPartialReason, undefined);
    const second = start("head -c 100000 /dev/zero", { logs });
    await untilExit(second);
    assert.match(second.logPartialReason ?? "", /the Pi session's logs are full/);
  });

  it("the runtime's log directory never holds more than its quota, the exit-tail budget and marker lines, however many jobs run after the quota", async (t) => {
    const quota = 200_000;
    const parent = mkdtempSync(join(tmpdir(), "piue-disk-bound-"));
    t.after(() => rmSync(parent, { recursive: true, force: true }));
    const logs = new LogDirectory({ ...logConfig({ [RUNTIME_LOG_QUOTA_ENV]: String(quota) }), parent });
    const runtime = new ExecRuntime(logs);
    // 40 jobs of 1 MB each: without the tail budget their tails alone would add 40 × 512 KiB = 20 MiB.
    const jobs = 40;
    for (let i = 0; i < jobs; i++) {
      const report = await runtime.exec(request(`head -c 1000000 /dev/zero | tr '\\0' x; echo; echo end-${i}`, 10_000));
      assert.equal(report.exit?.exitCode, 0, report.text.slice(-200));
    }
    await runtime.shutdown();
    const dir = logs.path();
    // The job logs (the watchdog keeps its registry beside them; the quota is about what jobs print).
    const files = readdirSync(dir)
      .filter((name) => /^job-\d+-.*\.log$/.test(name))
      .map((name) => join(dir, name));
    assert.equal(files.length, jobs);
    const sizes = files.map((file) => statSync(file).size);
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const markers = jobs * 400;
    assert.ok(total <= quota + LOG_TAIL_BUDGET_BYTES + markers, `the directory holds ${total} bytes`);
    assert.ok(total >= quota + LOG_TAIL_BUDGET_BYTES - LOG_TAIL_BYTES, `the budget is used, not wasted (${total} bytes)`);
    const onlyMarker = sizes.filter((size) => size < 400).length;
    assert.ok(onlyMarker >= 5, `the last jobs' logs hold only their marker (${onlyMarker} do)`);
    const last = readFileSync(files.find((file) => /job-40-/.test(file))!, "utf8");
    assert.match(
      last,
      /^\n\[pi-unified-exec: log quota reached: the Pi session's logs are full\. Later output is not logged, and none of it will be appended at exit: this Pi session's budget for exit tails is used up\.\]\n$/,
    );
  });

  it("PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop stops the job instead", async () => {
    const logs = new LogDirectory(config({ jobQuotaBytes: 50_000, onQuota: "stop" }));
    const job = start("yes flood", { logs });
    await untilExit(job);
    assert.equal(job.exit?.stoppedBy, "log_quota");
    assert.equal(job.exit?.signal, "SIGTERM");
  });

  it("a storage failure mid-run keeps the job running and is reported; nothing crashes", async () => {
    let written = 0;
    const failingDisk = new LogDirectory(config({}), () => {
      const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          written += chunk.length;
          callback(written > 10_000 ? Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }) : null);
        },
      });
      return stream;
    });
    const job = start("for i in $(seq 1 2000); do echo line $i; done; read -t 0.3 x; echo still-alive", { logs: failingDisk });
    await waitFor(() => job.logPartialReason !== undefined, "the disk to fail");
    assert.equal(job.status, "running");
    assert.match(job.logPartialReason!, /log write failed: ENOSPC/);
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
    assert.match(job.takeOutput().text, /still-alive\n$/);
  });
});

describe("runtime supervision", () => {
  it(
    "shutdown also stops a job's descendant that left its process group, found by the job's marker",
    { skip: process.platform !== "linux" && "reads /proc" },
    async () => {
      const runtime = new ExecRuntime();
      const report = await runtime.exec(request(`${ESCAPE_GROUP} & sleep 0.5`, 2_000));
      const [daemon] = pidsIn(report.text);
      assert.ok(daemon && processAlive(daemon), report.text);
      escaped.push(daemon);
      const shutdown = await runtime.shutdown();
      assert.deepEqual(shutdown.escaped, [daemon]);
      await waitFor(() => !processAlive(daemon), "the escaped descendant to be stopped");
    },
  );

  it("lists jobs with their fields; an exited job once more, then it is gone", async () => {
    const runtime = new ExecRuntime();
    const long = await runtime.exec(request("echo hi; sleep 300"));
    const short = await runtime.exec(request("sleep 0.5; echo done"));
    await waitFor(() => runtime.jobs().some((job) => job.id === short.sessionId && job.exit), "the short job to exit");
    const listing = runtime.list();
    assert.deepEqual(
      listing.map((job) => [job.sessionId, job.status]),
      [
        [long.sessionId, "running"],
        [short.sessionId, "exited"],
      ],
    );
    const running = listing[0]!;
    assert.equal(running.command, "echo hi; sleep 300");
    assert.equal(running.outputBytesTotal, 3);
    assert.ok(running.deadlineRemainingMs! > 1_700_000);
    assert.equal(listing[1]!.exit?.exitCode, 0);
    assert.deepEqual(
      runtime.list().map((job) => job.sessionId),
      [long.sessionId],
      "the exited job was pruned",
    );
    await runtime.shutdown();
  });

  it("never prunes or consumes a job with an attached call", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("sleep 0.3"));
    const job = runtime.jobs()[0]!;
    assert.ok(job.attach("write_stdin"));
    await untilExit(job);
    assert.equal(runtime.list()[0]?.attached, true);
    assert.equal(runtime.list().length, 1, "still there");
    job.detach();
    assert.equal(runtime.list().length, 1, "listed once more");
    assert.equal(runtime.list().length, 0);
    assert.ok(report.sessionId);
    await runtime.shutdown();
  });

  it("refuses a second call on an attached job at once; kill_session still works and ends the wait", async () => {
    const runtime = new ExecRuntime();
    const { sessionId } = await runtime.exec(request("sleep 300"));
    const waiting = runtime.interact(sessionId!, {}, { ms: 60_000 });
    const t0 = performance.now();
    await assert.rejects(runtime.interact(sessionId!, {}, { ms: 5_000 }), /Session \d+ is busy: a write_stdin call is attached/);
    assert.ok(performance.now() - t0 < 500, "it failed at once");
    const killed = await runtime.kill(sessionId!, "SIGTERM");
    assert.equal(killed.exit?.signal, "SIGTERM");
    const waited = await waiting;
    assert.equal(waited.exit?.exitCode, 143);
    assert.ok(performance.now() - t0 < 5_000);
    await runtime.shutdown();
  });

  it("kill_session: an exited job not yet read is reported as already exited; a reported one is unknown", async () => {
    const runtime = new ExecRuntime();
    const { sessionId } = await runtime.exec(request("sleep 0.4; exit 4"));
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the exit");
    const first = await runtime.kill(sessionId!, "SIGTERM");
    assert.equal(first.alreadyExited, true);
    assert.equal(first.exit?.exitCode, 4);
    await assert.rejects(runtime.kill(sessionId!, "SIGTERM"), /Unknown session_id/);
    await runtime.shutdown();
  });

  it("kill_session reaches the lingering group of a reported job", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("sleep 300 & echo $!; exit 0", 2_000));
    assert.equal(report.exit?.exitCode, 0);
    const [sleeper] = pidsIn(report.text);
    const listed = runtime.list();
    assert.deepEqual(
      listed.map((job) => [job.sessionId, job.cleanup]),
      [[report.jobId, "unconfirmed"]],
    );
    const killed = await runtime.kill(report.jobId, "SIGTERM");
    assert.equal(killed.cleanup, "confirmed");
    await waitFor(() => !processAlive(sleeper!), "the sleeper to end");
    assert.deepEqual(runtime.list(), []);
    await runtime.shutdown();
  });

  it("at capacity: completed records make room; all-live refuses before spawning; the first job still answers", async () => {
    const runtime = new ExecRuntime(undefined, 3);
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await runtime.exec(request("sleep 300", 250)));
    await assert.rejects(runtime.exec(request("echo never > /dev/null")), /All 3 job slots hold running jobs/);
    const answer = await runtime.interact(jobs[0]!.sessionId!, {}, { ms: 250 });
    assert.equal(answer.sessionId, jobs[0]!.sessionId);
    await runtime.kill(jobs[1]!.sessionId!, "SIGKILL");
    const next = await runtime.exec(request("sleep 300", 250));
    assert.ok(next.sessionId);
    await runtime.shutdown();
  });

  it("warns from 60 slots in use", async () => {
    const runtime = new ExecRuntime(undefined, 64);
    const first = await Promise.all(Array.from({ length: 59 }, () => runtime.exec(request("sleep 300", 250))));
    assert.ok(first.every((report) => report.slots === undefined));
    const sixtieth = await runtime.exec(request("sleep 300", 250));
    assert.deepEqual(sixtieth.slots, { used: 60, capacity: 64 });
    await runtime.shutdown();
  });
});
