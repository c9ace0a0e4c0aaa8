import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { UnknownJobError } from "../../../src/core/shared/errors.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { escapedDaemonThenExit, StartedJobs, statusOf, untilExit } from "../../helpers/jobs.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";

const request = (cmd: string, yieldMs = 2_000, extra: { workdir?: string; shell?: string } = {}) =>
  prepareExec({ cmd, yield_time_ms: yieldMs, ...extra }, process.cwd(), process.env);
const output = (report: JobReport) => report.output.text;
const poll = { ms: 10_000 };
const started = new StartedJobs();

describe("ExecRuntime", () => {
  it("reports a quick command's exit directly, without a session id", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("echo hi; exit 3"));
    assert.equal(runningId(report), undefined);
    assert.equal(report.job.exit?.exitCode, 3);
    assert.equal(output(report), "hi\n");
    assert.equal(report.waitEnd, "exited");
    assert.deepEqual(runtime.jobs(), [], "an early exit is never registered");
    await runtime.shutdown();
  });

  it("returns a session id at the end of the window; a poll gets only the new output and the exit, once", async () => {
    const runtime = new ExecRuntime();
    // A runtime's first job also waits for the sweep of what dead runtimes left: keep it out of this window.
    await runtime.exec(request("true"));
    const first = await runtime.exec(request("echo start; sleep 0.6; echo end", 250));
    assert.equal(runningId(first), first.job.jobId);
    assert.equal(first.job.exit, undefined);
    assert.equal(output(first), "start\n");
    assert.ok(first.wallMs >= 240 && first.wallMs < 2_000, `wall ${first.wallMs}`);
    const second = await runtime.interact({ jobId: first.job.jobId, window: poll });
    assert.equal(second.job.exit?.exitCode, 0);
    assert.equal(output(second), "end\n");
    assert.equal(second.job.outputBytesTotal, 10);
    assert.ok(second.wallMs < 5_000, "the poll returned at the exit, not at its deadline");
    await assert.rejects(runtime.interact({ jobId: first.job.jobId, window: poll }), UnknownJobError);
    await runtime.shutdown();
  });

  it("reports a job that exits between calls on the next poll, at once", async () => {
    const runtime = new ExecRuntime();
    const first = await runtime.exec(request("sleep 0.4; echo done", 250));
    await waitFor(() => runtime.jobs().every((job) => job.exit !== undefined), "the job to exit");
    const t0 = performance.now();
    const second = await runtime.interact({ jobId: first.job.jobId, window: poll });
    assert.ok(performance.now() - t0 < 200);
    assert.equal(second.job.exit?.exitCode, 0);
    assert.equal(output(second), "done\n");
    await runtime.shutdown();
  });

  it("allocates ids from 1 at spawn; an early exit spends its id without exposing it", async () => {
    const runtime = new ExecRuntime();
    const quick = await runtime.exec(request("true"));
    assert.equal(quick.job.jobId, 1);
    const slow = await runtime.exec(request("sleep 5", 250));
    assert.equal(runningId(slow), 2);
    await assert.rejects(runtime.interact({ jobId: 1, window: poll }), UnknownJobError);
    await runtime.shutdown();
  });

  it("ends the window on abort and keeps the job addressable", async () => {
    const runtime = new ExecRuntime();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const report = await runtime.exec(request("sleep 5", 20_000), { signal: controller.signal });
    assert.equal(report.waitEnd, "aborted");
    assert.ok(runningId(report));
    assert.equal(runtime.jobs().length, 1);
    await runtime.shutdown();
  });

  it("reports a spawn that fails asynchronously (shell gone, workdir gone) as a failure, never an empty success", async () => {
    const runtime = new ExecRuntime();
    const vanishedShell = { ...request("true"), shell: { name: "bash" as const, path: "/nonexistent/bash" } };
    const noShell = await runtime.exec(vanishedShell);
    assert.equal(noShell.job.exit?.exitCode, null);
    assert.match(noShell.job.exit?.failure ?? "", /could not start \/nonexistent\/bash in .*ENOENT/);
    const vanishedDir = { ...request("true"), cwd: "/nonexistent/dir" };
    const noDir = await runtime.exec(vanishedDir);
    assert.match(noDir.job.exit?.failure ?? "", /could not start .* in \/nonexistent\/dir: .*ENOENT/);
    await runtime.shutdown();
  });

  it("writes input and attaches for the input window", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(request("head -n 1; sleep 0.3", 250));
    const t0 = performance.now();
    const echoed = await runtime.interact({
      jobId: started.job.jobId,
      input: { kind: "bytes", bytes: Buffer.from("hi\n") },
      window: { ms: 250 },
    });
    assert.ok(performance.now() - t0 < 2_000);
    assert.equal(echoed.output.text, "hi\n");
    assert.deepEqual(echoed.input, { input: "bytes", sentBytes: 3 });
    const done = await runtime.interact({ jobId: started.job.jobId, window: poll });
    assert.equal(done.job.exit?.exitCode, 0);
    await runtime.shutdown();
  });

  it("a write to a job whose shell exited (a background process keeps it) says 0 bytes sent beside the failure", async () => {
    const runtime = new ExecRuntime();
    const shellGone = await runtime.exec(request("sleep 30 & echo started", 1_000));
    assert.ok(shellGone.job.shellExit, "the shell exited, the job runs on");
    const wrote = await runtime.interact({
      jobId: shellGone.job.jobId,
      input: { kind: "bytes", bytes: Buffer.from("hello\n") },
      window: { ms: 250 },
    });
    assert.match(wrote.input?.failure ?? "", /^stdin write failed/);
    const header = (jobResult(wrote).content[0] as { text: string }).text.split("\n---\n")[0]!;
    assert.match(header, /\ninput: 0 bytes sent\nfailure_message: stdin write failed/);
    await runtime.shutdown();
  });

  it("returns `sleep 2 & exit 3` as running soon after the shell exits, and reports exit code 3 when the sleep ends", async () => {
    const runtime = new ExecRuntime();
    await runtime.exec(request("true")); // the first job's sweep of dead runtimes is not this call's
    const report = await runtime.exec(request("sleep 2 & exit 3", 10_000));
    assert.equal(report.job.exit, undefined);
    assert.equal(report.waitEnd, "background");
    assert.deepEqual(report.job.shellExit, { code: 3, signal: null });
    assert.equal(report.job.background?.pids.length, 1);
    assert.equal(report.job.background?.named[0]?.command, "sleep 2");
    assert.ok(report.wallMs < 1_900, `took ${report.wallMs} ms: the window must not be waited out`);
    const done = await runtime.interact({ jobId: report.job.jobId, window: poll });
    assert.equal(done.job.exit?.exitCode, 3);
    await runtime.shutdown();
  });

  for (const [what, command] of [
    // The shell exits a second after Node is up, past Node's reset of SIGHUP: a hangup that reached the job would end it.
    ["`node server.js &`", "node -e 'setInterval(() => {}, 1000)' & sleep 1; echo started"],
    ["`nohup node server.js > log 2>&1 &`", "nohup node -e 'setInterval(() => {}, 1000)' > /dev/null 2>&1 & sleep 1"],
  ])
    it(
      `on a PTY, ${what} keeps the job past the shell's exit, though Node resets SIGHUP as it starts`,
      { skip: process.platform === "win32" },
      async () => {
        const runtime = new ExecRuntime();
        const report = await runtime.exec(prepareExec({ cmd: command, tty: true, yield_time_ms: 10_000 }, process.cwd(), process.env));
        assert.equal(report.waitEnd, "background", `${report.job.exit ? "ended" : "running"}: ${report.output.text}`);
        assert.equal(report.job.background?.pids.length, 1);
        const killed = await runtime.kill(report.job.jobId, "SIGTERM");
        assert.equal(killed.termination.cleanup, "confirmed");
        await runtime.shutdown();
      },
    );

  it("shutdown stops live jobs, TERM-ignoring ones and lingering descendants, then refuses new work", async () => {
    const runtime = new ExecRuntime();
    const live = await runtime.exec(request("echo $$; sleep 300", 300));
    const stubborn = await runtime.exec(request("trap '' TERM; sleep 300 & echo $!; wait", 300));
    const lingering = await runtime.exec(request("sleep 300 & echo $!; exit 0", 300));
    const pids = [live, stubborn, lingering].flatMap((report) => pidsIn(output(report)));
    assert.equal(pids.length, 3);
    assert.ok(pids.every(processAlive));
    const result = await runtime.shutdown();
    assert.deepEqual(result.survivors, []);
    assert.deepEqual(result.errors, []);
    assert.equal(result.terminated, 3);
    assert.equal(result.killed, 1, "only the TERM-ignoring group needed SIGKILL");
    assert.deepEqual(pids.filter(processAlive), []);
    await assert.rejects(runtime.exec(request("true")), /shutting down/);
  });
});

describe("runtime supervision", () => {
  const request = (cmd: string, yieldMs = 300) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);

  it(
    "shutdown also stops a job's descendant that left its process group, found by the job's marker",
    { skip: process.platform !== "linux" && "reads /proc" },
    async () => {
      const runtime = new ExecRuntime();
      const report = await runtime.exec(request(escapedDaemonThenExit(), 10_000));
      const [daemon] = pidsIn(report.output.text);
      assert.ok(daemon && processAlive(daemon), report.output.text);
      started.pid(daemon);
      const shutdown = await runtime.shutdown();
      assert.deepEqual(shutdown.escaped, [daemon]);
      await waitFor(() => !processAlive(daemon), "the escaped descendant to be stopped");
    },
  );

  it("lists jobs with their fields; an exited job once more, then it is gone", async () => {
    const runtime = new ExecRuntime();
    const long = await runtime.exec(request("echo hi; sleep 300"));
    const short = await runtime.exec(request("sleep 0.5; echo done"));
    await waitFor(() => runtime.jobs().some((job) => job.id === runningId(short) && job.exit), "the short job to exit");
    const listing = runtime.list();
    assert.deepEqual(
      listing.map((job) => [job.jobId, statusOf(job)]),
      [
        [runningId(long), "running"],
        [runningId(short), "exited"],
      ],
    );
    const running = listing[0]!;
    assert.equal(running.command, "echo hi; sleep 300");
    assert.equal(running.outputBytesTotal, 3);
    assert.ok(running.deadlineRemainingMs! > 1_700_000);
    assert.equal(listing[1]!.exit?.exitCode, 0);
    assert.deepEqual(
      runtime.list().map((job) => job.jobId),
      [runningId(long)],
      "the exited job was pruned",
    );
    await runtime.shutdown();
  });

  it("never prunes or consumes a job with an attached call", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("sleep 0.3"));
    const job = runtime.jobs()[0]!;
    assert.ok(job.holders.attach("write_stdin"));
    await untilExit(job);
    assert.equal(runtime.list()[0]?.attached, true);
    assert.equal(runtime.list().length, 1, "still there");
    job.holders.detach();
    assert.equal(runtime.list().length, 1, "listed once more");
    assert.equal(runtime.list().length, 0);
    assert.ok(runningId(report));
    await runtime.shutdown();
  });

  it("refuses a second call on an attached job at once; kill_session still works and ends the wait", async () => {
    const runtime = new ExecRuntime();
    const sessionId = runningId(await runtime.exec(request("sleep 300")));
    const waiting = runtime.interact({ jobId: sessionId!, window: { ms: 60_000 } });
    const t0 = performance.now();
    await assert.rejects(
      runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }),
      /Session \d+ is busy: a write_stdin call is attached/,
    );
    assert.ok(performance.now() - t0 < 500, "it failed at once");
    const killed = await runtime.kill(sessionId!, "SIGTERM");
    assert.equal(killed.job.exit?.signal, "SIGTERM");
    const waited = await waiting;
    assert.equal(waited.job.exit?.exitCode, 143);
    assert.ok(performance.now() - t0 < 5_000);
    await runtime.shutdown();
  });

  it("kill_session: an exited job not yet read is reported as already exited; a reported one is unknown", async () => {
    const runtime = new ExecRuntime();
    const sessionId = runningId(await runtime.exec(request("sleep 0.4; exit 4")));
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the exit");
    const first = await runtime.kill(sessionId!, "SIGTERM");
    assert.equal(first.alreadyExited, true);
    assert.equal(first.job.exit?.exitCode, 4);
    await assert.rejects(runtime.kill(sessionId!, "SIGTERM"), /Unknown session_id/);
    await runtime.shutdown();
  });

  it("kill_session reaches the lingering group of a reported job", async () => {
    const runtime = new ExecRuntime();
    // `set -m`: the sleep gets a group of its own, which does not hold a pipe job; it lingers in the session.
    const report = await runtime.exec(request("set -m; sleep 300 & echo $!; exit 0", 2_000));
    assert.equal(report.job.exit?.exitCode, 0);
    const [sleeper] = pidsIn(report.output.text);
    const listed = runtime.list();
    assert.deepEqual(
      listed.map((job) => [job.jobId, job.cleanup]),
      [[report.job.jobId, "unconfirmed"]],
    );
    const killed = await runtime.kill(report.job.jobId, "SIGTERM");
    assert.equal(killed.termination.cleanup, "confirmed");
    await waitFor(() => !processAlive(sleeper!), "the sleeper to end");
    assert.deepEqual(runtime.list(), []);
    await runtime.shutdown();
  });

  it("at capacity: completed records make room; all-live refuses before spawning; the first job still answers", async () => {
    const runtime = new ExecRuntime({ capacity: 3 });
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await runtime.exec(request("sleep 300", 250)));
    await assert.rejects(runtime.exec(request("echo never > /dev/null")), /All 3 job slots hold running jobs/);
    const answer = await runtime.interact({ jobId: jobs[0]!.job.jobId, window: { ms: 250 } });
    assert.equal(runningId(answer), runningId(jobs[0]!));
    await runtime.kill(jobs[1]!.job.jobId, "SIGKILL");
    const next = await runtime.exec(request("sleep 300", 250));
    assert.ok(runningId(next));
    await runtime.shutdown();
  });

  it("a job evicted to make room takes its wake_on_pattern record with it", async () => {
    const runtime = new ExecRuntime({ capacity: 2 });
    const watched = await runtime.exec(
      prepareExec({ cmd: "sleep 0.5", yield_time_ms: 250, wake_on_pattern: "ERROR" }, process.cwd(), process.env),
    );
    const id = runningId(watched)!;
    await waitFor(() => runtime.snapshotOf(id)?.exit !== undefined, "its exit, unread"); // a listing would read it
    assert.equal(runtime.completions.knows(id), true);
    await runtime.exec(request("sleep 300", 250));
    await runtime.exec(request("sleep 300", 250)); // evicts the exited job
    assert.equal(runtime.completions.knows(id), false);
    await runtime.shutdown();
  });

  it("warns from 60 slots in use", async () => {
    const runtime = new ExecRuntime({ capacity: 64 });
    const first = await Promise.all(Array.from({ length: 59 }, () => runtime.exec(request("sleep 300", 250))));
    assert.ok(first.every((report) => report.slots === undefined));
    const sixtieth = await runtime.exec(request("sleep 300", 250));
    assert.deepEqual(sixtieth.slots, { used: 60, capacity: 64 });
    await runtime.shutdown();
  });
});
