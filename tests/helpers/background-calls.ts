/**
 * The runtime's calls on a shell that leaves processes running, one run each: once in
 * `tests/unit/core/job-background.test.ts`, many times beside CPU burners in
 * `tests/stress/background.test.ts`.
 */
import assert from "node:assert/strict";
import type { Job } from "../../src/core/job/job.ts";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { processAlive, waitFor } from "./processes.ts";

const request = (cmd: string, yieldMs = 10_000) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);
const poll = { ms: 10_000 };

/**
 * `sleep 0.4 & echo hi` ends in its call; a server-like background returns running with what runs
 * on, a later line by `until_pattern`, news only when the set changes, and a kill confirmed.
 */
export async function quickAndKeptBackgrounds(runtime: ExecRuntime, run = 0): Promise<void> {
  const quick = await runtime.exec(request("sleep 0.4 & echo hi"));
  assert.equal(quick.job.exit?.exitCode, 0, `run ${run}`);
  assert.equal(quick.output.text, "hi\n", `run ${run}`);
  assert.ok(quick.wallMs < 5_000, `run ${run}: ${quick.wallMs} ms`);
  const kept = await runtime.exec(request("(sleep 1.5; echo late; exec sleep 30) & echo started; exit 5"));
  assert.equal(kept.job.exit, undefined, `run ${run}`);
  assert.equal(kept.waitEnd, "background", `run ${run}`);
  assert.equal(kept.backgroundChanged, true, `run ${run}: the first result says what runs on`);
  assert.deepEqual(kept.job.shellExit, { code: 5, signal: null });
  assert.equal(kept.output.text, "started\n", `run ${run}`);
  const polled = await runtime.interact(
    prepareWrite({ session_id: kept.job.jobId, until_pattern: "late", yield_time_ms: 10_000 }, process.env),
  );
  assert.equal(polled.output.text, "late\n", `run ${run}`);
  // The subshell became `sleep 30`: what runs on changed, and the poll says so; the next one has no news.
  assert.equal(polled.backgroundChanged, true, `run ${run}`);
  const again = await runtime.interact({ jobId: kept.job.jobId, window: { ms: 300 } });
  assert.equal(again.backgroundChanged, undefined, `run ${run}: the same set is not news`);
  const killed = await runtime.kill(kept.job.jobId, "SIGTERM");
  assert.deepEqual(killed.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" }, `run ${run}`);
  assert.equal(killed.termination.cleanup, "confirmed", `run ${run}`);
}

/** A background process that ends after the call ends the job once: the next poll reports it, then the id is unknown. */
export async function backgroundEndsAfterTheCall(runtime: ExecRuntime, run = 0): Promise<void> {
  const report = await runtime.exec(request("sleep 2 > /dev/null 2>&1 & exit 7", 250));
  assert.equal(report.job.exit, undefined, `run ${run}`);
  const done = await runtime.interact({ jobId: report.job.jobId, window: poll });
  assert.equal(done.job.exit?.exitCode, 7, `run ${run}`);
  await assert.rejects(runtime.interact({ jobId: report.job.jobId, window: poll }), /Unknown session_id/);
}

/**
 * `sleep 30 & echo $!` through `runtime`, its sleep SIGKILLed at the end of the settle window of the
 * shell's exit, before the call's wait goes on: the call must report the job's end (exit code 0, no
 * background). Asserts it, and that the exit is reported once.
 */
export async function backgroundEndingAtSettle(runtime: ExecRuntime, label = ""): Promise<void> {
  const call = runtime.exec(prepareExec({ cmd: "sleep 30 & echo $!", yield_time_ms: 10_000 }, process.cwd(), process.env));
  let job: Job | undefined;
  await waitFor(() => {
    job = runtime.jobs().at(-1);
    return job?.leaderExited === true;
  }, "the shell's exit, the sleep running on");
  const sleeper = job!.backgroundNow()!.processes.pids[0]!;
  const ending = (job as unknown as { end: { onBackgroundSettled(listener: () => void): void } }).end;
  ending.onBackgroundSettled(() => {
    process.kill(sleeper, "SIGKILL");
    const deadline = performance.now() + 5_000;
    while (processAlive(sleeper) && performance.now() < deadline); // synchronous: nothing of ours runs meanwhile
  });
  const report = await call;
  assert.equal(report.waitEnd, "exited", label);
  assert.deepEqual(report.job.exit, { exitCode: 0, signal: null }, label);
  assert.equal(report.job.background, undefined, label);
  assert.equal(report.job.shellExit, undefined, label);
  assert.match(report.output.text, new RegExp(`^${sleeper}\\n$`), label);
  assert.equal(runtime.list().length, 0, `${label}: reported once`);
}
