/**
 * True reports after stops the model did not ask for: a job the user stopped (the sessions picker),
 * one its deadline stopped, one a session boundary stopped (handed to the session's next runtime)
 * answers the model's next call on its id once — who stopped it, the exit and the unread output —
 * then the id is unknown. Also: the first listing of an exited job whose group lingers says
 * `cleanup: unconfirmed`, and polls of a job whose wake is armed say so. Real child processes.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import type { Job } from "../../../src/core/job/job.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import type { ExecRuntime } from "../../../src/core/runtime.ts";
import { UnknownJobError } from "../../../src/core/shared/errors.ts";
import { StartedJobs, statusOf } from "../../helpers/jobs.ts";
import { startBurners } from "../../helpers/load.ts";
import { pidsIn, quietFor, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes as recordingWakes } from "../../helpers/runtime.ts";

const request = (cmd: string, yieldMs = 300, timeoutS?: number) =>
  prepareExec({ cmd, yield_time_ms: yieldMs, ...(timeoutS ? { timeout_s: timeoutS } : {}) }, process.cwd(), process.env);
const poll = { ms: 5_000 };
const runtimes: ExecRuntime[] = [];
const leftovers = new StartedJobs();

/** A runtime recording its wakes, shut down after the file's tests. */
function runtimeWithWakes(ids?: () => number) {
  const made = recordingWakes(ids);
  runtimes.push(made.runtime);
  return made;
}

/** A job that printed `start` into its first result and `unread` after it, then waits to be stopped. */
async function startedWithUnreadOutput(runtime: ExecRuntime, onExit: "none" | "wake" = "none") {
  const report = await runtime.exec(request("echo start; sleep 0.4; echo unread; exec sleep 300"), { onExit });
  assert.equal(report.output.text, "start\n");
  const job = runtime.jobs().find((candidate) => candidate.id === runningId(report))!;
  await waitFor(() => job.outputBytesTotal >= "start\nunread\n".length, "the unread output");
  return { sessionId: report.job.jobId, job };
}

/** The wake debounce several times over: a wake that was going to come has come by then. */
const DEBOUNCE_OVER_MS = WAKE_DEBOUNCE_MS * 4;

after(async () => {
  for (const runtime of runtimes) await runtime.shutdown();
});

describe("a job the user stopped", () => {
  it("answers the model's next poll once with killed_by user, the exit and the unread output; then the id is unknown", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId, job } = await startedWithUnreadOutput(runtime);
    const stop = await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    assert.equal(stop.job.exit?.stoppedBy, "user");
    assert.equal(stop.output.text, "", "the picker reads nothing the model has not seen");
    assert.ok(runtime.jobs().includes(job), "still registered for the model");
    assert.deepEqual(runtime.liveJobs(), [], "no longer live for the UI");
    const told = await runtime.interact({ jobId: sessionId, window: poll });
    assert.deepEqual(told.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "user" });
    assert.equal(told.output.text, "unread\n");
    assert.ok(told.wallMs < 1_000, "answered at once");
    await assert.rejects(runtime.interact({ jobId: sessionId, window: poll }), UnknownJobError);
  });

  it("a write to it is not sent and says so, in the same single answer", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId } = await startedWithUnreadOutput(runtime);
    await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    const told = await runtime.interact({ jobId: sessionId, input: { kind: "bytes", bytes: Buffer.from("hello\n") }, window: { ms: 250 } });
    assert.equal(told.job.exit?.stoppedBy, "user");
    assert.match(told.input?.failure ?? "", /stdin write failed: the job has already exited/);
    assert.equal(told.output.text, "unread\n");
  });

  it("wakes no one, even with a wake armed", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const { sessionId } = await startedWithUnreadOutput(runtime, "wake");
    await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    await quietFor(DEBOUNCE_OVER_MS);
    assert.deepEqual(batches, []);
    const told = await runtime.interact({ jobId: sessionId, window: poll }, { callId: "c1" });
    assert.equal(told.job.exit?.stoppedBy, "user");
    assert.notEqual(told.wake, "consumed", "there was no wake left to consume");
  });

  it("the model's kill_session on it reports the exit already there, killed_by user, with the unread output", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId } = await startedWithUnreadOutput(runtime);
    await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    const killed = await runtime.kill(sessionId, "SIGTERM", "c2");
    assert.equal(killed.alreadyExited, true);
    assert.equal(killed.job.exit?.stoppedBy, "user");
    assert.equal(killed.output.text, "unread\n");
    await assert.rejects(runtime.interact({ jobId: sessionId, window: poll }), UnknownJobError);
  });

  it("a listing shows it once with who stopped it, then it is gone", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId } = await startedWithUnreadOutput(runtime);
    await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    const listed = runtime.list("c3");
    assert.deepEqual(
      listed.map((job) => [job.jobId, statusOf(job), job.exit?.stoppedBy]),
      [[sessionId, "exited", "user"]],
    );
    assert.deepEqual(runtime.list(), []);
    await assert.rejects(runtime.interact({ jobId: sessionId, window: poll }), UnknownJobError);
  });

  it("a model call attached while the user stops the job returns that exit, killed_by user", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId } = await startedWithUnreadOutput(runtime);
    const waiting = runtime.interact({ jobId: sessionId, window: { ms: 20_000 } });
    await waitFor(() => runtime.jobs()[0]?.attached !== undefined, "the poll to attach");
    await runtime.kill(sessionId, "SIGTERM", undefined, "user");
    const told = await waiting;
    assert.equal(told.job.exit?.stoppedBy, "user");
    assert.equal(told.output.text, "unread\n");
    await assert.rejects(runtime.interact({ jobId: sessionId, window: poll }), UnknownJobError);
  });
});

describe("a job its deadline stopped while nobody was attached", () => {
  it("answers the next poll once with its exit (stoppedBy timeout) and the output, then the id is unknown", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const report = await runtime.exec(request("echo start; sleep 0.3; echo late; exec sleep 300", 250, 1), { onExit: "wake" });
    await waitFor(() => batches.length > 0, "the deadline's wake", 10_000);
    assert.match(batches[0]!.jobs[0]!.reason ?? "", /timeout_s deadline/, "a deadline stop still wakes, with the reason");
    const told = await runtime.interact({ jobId: report.job.jobId, window: poll });
    assert.deepEqual(told.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" });
    assert.equal(told.output.text, "late\n");
    await assert.rejects(runtime.interact({ jobId: report.job.jobId, window: poll }), UnknownJobError);
  });
});

describe("a job stopped while its shell's background runs on ends by the stop's signal, not its shell's code", () => {
  /** `sleep 300 &`: the shell exits 0 at once, the job runs on in the background. */
  const backgroundJob = async (runtime: ExecRuntime, timeoutS?: number) => {
    const report = await runtime.exec(request("sleep 300 & exit 0", 10_000, timeoutS), { onExit: "wake" });
    assert.equal(report.waitEnd, "background");
    assert.deepEqual(report.job.shellExit, { code: 0, signal: null });
    return report.job.jobId;
  };

  it("kill_session: the kill's report says SIGTERM, and with SIGINT (which the background ignores) the SIGKILL it escalated to", async () => {
    const { runtime } = runtimeWithWakes();
    const killed = await runtime.kill(await backgroundJob(runtime), "SIGTERM");
    assert.deepEqual(killed.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" });
    const interrupted = await runtime.kill(await backgroundJob(runtime), "SIGINT");
    assert.equal(interrupted.termination.escalated, true);
    assert.deepEqual(interrupted.job.exit, { exitCode: 137, signal: "SIGKILL", stoppedBy: "killed" });
  });

  it("its deadline: the wake and the listing say SIGTERM and the deadline", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const id = await backgroundJob(runtime, 2);
    await waitFor(() => batches.length > 0, "the deadline's wake", 10_000);
    assert.deepEqual([batches[0]!.jobs[0]!.exitCode, batches[0]!.jobs[0]!.signal], [143, "SIGTERM"]);
    assert.match(batches[0]!.jobs[0]!.reason ?? "", /timeout_s deadline/);
    const listed = runtime.list().find((job) => job.jobId === id);
    assert.deepEqual(listed?.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" });
  });

  it("the user's stop from the picker: the model's next poll says SIGTERM, killed by the user", async () => {
    const { runtime } = runtimeWithWakes();
    const id = await backgroundJob(runtime);
    await runtime.kill(id, "SIGTERM", undefined, "user");
    const told = await runtime.interact({ jobId: id, window: poll });
    assert.deepEqual(told.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "user" });
  });
});

describe("a job a session boundary stopped", () => {
  it("is handed to the session's next runtime: its id answers once (stoppedBy boundary, unread output), and no id is reused", async () => {
    let next = 1;
    const ids = () => next++;
    const { runtime: before } = runtimeWithWakes(ids);
    const { sessionId: stopped } = await startedWithUnreadOutput(before, "wake");
    const finished = await before.exec(request("sleep 0.3; echo finished-before; exit 5", 250));
    await waitFor(() => before.jobs().some((job) => job.id === runningId(finished) && job.exit), "the natural exit");
    await before.shutdown();
    const handed = await before.handover();
    assert.deepEqual(handed.map((job) => job.id).sort(), [stopped, runningId(finished)].sort());
    const { runtime: afterwards, batches } = runtimeWithWakes(ids);
    afterwards.inherit(handed);
    const fresh = await afterwards.exec(request("sleep 300", 250));
    assert.ok(fresh.job.jobId > finished.job.jobId, `a new id (${runningId(fresh)}), never an old one`);
    const told = await afterwards.interact({ jobId: stopped, window: poll });
    assert.deepEqual(told.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "boundary" });
    assert.equal(told.output.text, "unread\n");
    await assert.rejects(afterwards.interact({ jobId: stopped, window: poll }), UnknownJobError);
    const natural = await afterwards.interact({ jobId: finished.job.jobId, window: poll });
    assert.deepEqual(natural.job.exit, { exitCode: 5, signal: null }, "a job that ended by itself before the boundary keeps its own exit");
    assert.equal(natural.output.text, "finished-before\n");
    await quietFor(DEBOUNCE_OVER_MS);
    assert.deepEqual(batches, [], "no wake crosses a boundary");
  });
});

describe("listings and polls say what is true", () => {
  // `set -m` moves the background sleep into a group of its own: it does not hold a pipe job (only the
  // shell's group does), so the job ends with its shell and the sleep's group lingers in its session.
  it("the first listing of an exited job whose group lives on already says cleanup: unconfirmed", async () => {
    const { runtime } = runtimeWithWakes();
    const report = await runtime.exec(request("set -m; sleep 0.4; sleep 30 & echo $!; exit 0", 250));
    const job = runtime.jobs().find((candidate) => candidate.id === runningId(report)) as Job;
    await waitFor(() => job.exit !== undefined, "the leader's exit");
    const first = runtime.list();
    assert.deepEqual(
      first.map((entry) => [entry.jobId, statusOf(entry), entry.cleanup, entry.alreadyReported]),
      [[runningId(report), "exited", "unconfirmed", undefined]],
    );
    const second = runtime.list();
    assert.deepEqual(
      second.map((entry) => [entry.jobId, entry.cleanup, entry.alreadyReported]),
      [[runningId(report), "unconfirmed", true]],
    );
    const [sleeper] = pidsIn(job.takeOutput().text);
    if (sleeper) leftovers.pid(sleeper);
    const killed = await runtime.kill(report.job.jobId, "SIGTERM");
    assert.equal(killed.termination.cleanup, "confirmed");
  });

  it("an exited job whose group is empty lists no cleanup", async () => {
    const { runtime } = runtimeWithWakes();
    const report = await runtime.exec(request("sleep 0.4; exit 0", 250));
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the exit");
    assert.deepEqual(
      runtime.list().map((entry) => [entry.jobId, entry.cleanup]),
      [[runningId(report), undefined]],
    );
  });

  it("a poll or a write on a job whose wake is armed says so; after disarming, or with the exit, it does not", async () => {
    const { runtime } = runtimeWithWakes();
    const sessionId = runningId(await runtime.exec(request("read line; echo got $line; sleep 1"), { onExit: "wake" }));
    const polled = await runtime.interact({ jobId: sessionId!, window: { ms: 250 } }, { callId: "p1" });
    assert.equal(polled.wake, "armed");
    const cancelled = new AbortController();
    cancelled.abort();
    const aborted = await runtime.interact({ jobId: sessionId!, window: { ms: 250 } }, { callId: "p2", signal: cancelled.signal });
    assert.equal(aborted.cancelled, true);
    assert.equal(aborted.wake, "armed", "a cancelled poll leaves the wake armed, and says so");
    const wrote = await runtime.interact(
      { jobId: sessionId!, input: { kind: "bytes", bytes: Buffer.from("x\n") }, window: { ms: 250 } },
      { callId: "p3" },
    );
    assert.equal(wrote.wake, "armed");
    const done = await runtime.interact({ jobId: sessionId!, window: poll }, { callId: "p4" });
    assert.equal(done.job.exit?.exitCode, 0);
    assert.notEqual(done.wake, "armed", "the result that carries the exit consumes the wake");
    assert.equal(done.wake, "consumed");

    const other = await runtime.exec(request("sleep 300"), { onExit: "wake" });
    runtime.setOnExit(other.job.jobId, { onExit: "none" });
    const disarmed = await runtime.interact({ jobId: other.job.jobId, window: { ms: 250 } }, { callId: "p5" });
    assert.notEqual(disarmed.wake, "armed");
  });
});

describe("under load (CPU burners beside), many times over", () => {
  const RUNS = 15;

  it("a user kill is told once, with every unread byte, every time", async () => {
    const stopBurners = startBurners();
    try {
      const { runtime } = runtimeWithWakes();
      const expected = `${Array.from({ length: 2_000 }, (_, i) => i + 1).join("\n")}\n`;
      for (let run = 0; run < RUNS; run++) {
        // The numbers come only after the first result, when the test (not a model call) says go.
        const report = await runtime.exec(request("echo start; read go; seq 1 2000; exec sleep 300", 250), { onExit: "wake" });
        assert.ok(runningId(report), `run ${run}: ${report.output.text}`);
        const job = runtime.jobs().find((candidate) => candidate.id === runningId(report))!;
        await job.send({ kind: "bytes", bytes: Buffer.from("go\n") }, performance.now() + 20_000);
        await waitFor(() => job.outputBytesTotal >= "start\n".length + expected.length, `run ${run}: the numbers`, 20_000);
        await runtime.kill(report.job.jobId, "SIGTERM", undefined, "user");
        const told = await runtime.interact({ jobId: report.job.jobId, window: poll }, { callId: `load-${run}` });
        assert.equal(told.job.exit?.stoppedBy, "user", `run ${run}`);
        // Under load "start" may land after the first result's window; the two reads hold it once.
        const shown = `${told.output.text.length} bytes ending ${JSON.stringify(told.output.text.slice(-12))}`;
        assert.ok(report.output.text + told.output.text === `start\n${expected}`, `run ${run}: the unread output, whole (got ${shown})`);
        await assert.rejects(runtime.interact({ jobId: report.job.jobId, window: poll }), UnknownJobError, `run ${run}`);
      }
    } finally {
      stopBurners();
    }
  });

  it("the first listing of an exited job whose group lives on says cleanup: unconfirmed, every time", async () => {
    const stopBurners = startBurners();
    try {
      const { runtime } = runtimeWithWakes();
      for (let run = 0; run < RUNS; run++) {
        const report = await runtime.exec(request("set -m; sleep 0.3; sleep 30 & echo $!; exit 0", 250));
        assert.ok(runningId(report), `run ${run}: ${report.output.text}`);
        const job = runtime.jobs().find((candidate) => candidate.id === runningId(report))!;
        await waitFor(() => job.exit !== undefined, `run ${run}: the leader's exit`, 20_000);
        const [sleeper] = pidsIn(job.takeOutput().text);
        if (sleeper) leftovers.pid(sleeper);
        assert.deepEqual(
          runtime.list().map((entry) => [entry.jobId, entry.cleanup]),
          [[runningId(report), "unconfirmed"]],
          `run ${run}`,
        );
        assert.equal((await runtime.kill(report.job.jobId, "SIGKILL")).termination.cleanup, "confirmed", `run ${run}`);
      }
    } finally {
      stopBurners();
    }
  });
});
