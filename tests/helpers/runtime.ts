/** Runtimes for unit tests: completion wakes recorded instead of sent to Pi, and shut down after the tests. */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { WakeBatch } from "../../src/core/completion/wake-delivery.ts";
import type { JobReport } from "../../src/core/job/job-snapshot.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";

/**
 * Shuts down, all at once, every runtime given to the function it returns, after the tests of the
 * file or `describe` block it is called in; the function returns the runtime it was given.
 */
export function shutDownAfter(): <R extends ExecRuntime>(runtime: R) => R {
  const runtimes: ExecRuntime[] = [];
  after(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.shutdown()));
  });
  return (runtime) => {
    runtimes.push(runtime);
    return runtime;
  };
}

/** A fresh temporary directory, removed after the tests of the file or block it is made in (after what was registered before it). */
export function scratchDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Makes fresh temporary directories to give runtimes as their log parent (so a test finds their
 * private directory and registry), removed after the tests of the file or block it is called in:
 * with retries, as a watchdog may still be writing there.
 */
export function logParents(prefix: string): () => string {
  const parents: string[] = [];
  after(() => {
    for (const parent of parents) rmSync(parent, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  return () => {
    const parent = mkdtempSync(join(tmpdir(), prefix));
    parents.push(parent);
    return parent;
  };
}

/**
 * Wakes the runtime has decided on and not yet sent: queued at the decision point, held for a run,
 * or waiting for a retry. A test shows that nothing more comes by settling and reading this, never
 * by a fixed wait: what is not pending now has no timer left to send it.
 */
export function pendingWakes(runtime: ExecRuntime): number {
  return runtime.completions.waiting;
}

/** Waits until the runtime has no wake pending. */
export function wakesSettled(runtime: ExecRuntime, timeoutMs = 10_000): Promise<void> {
  return waitFor(() => pendingWakes(runtime) === 0, "the runtime's pending wakes to go out", timeoutMs);
}

/** `ids`: a shared id source, as runtimes of one Pi process have. */
export function runtimeWithWakes(ids?: () => number) {
  const runtime = new ExecRuntime({ ids });
  const batches: WakeBatch[] = [];
  runtime.completions.bindSender((batch) => batches.push(batch));
  /** The job ids every wake so far announced, in order. */
  const woken = () => batches.flatMap((batch) => batch.jobs.map((job) => job.jobId));
  /** Every matched line a wake so far announced, in order. */
  const patternWakes = () => batches.flatMap((batch) => batch.patterns ?? []);
  return { runtime, batches, woken, patternWakes };
}

/** Makes runtimes with recorded wakes (`runtimeWithWakes`), shut down after the tests of the file or block it is called in. */
export function runtimesWithWakes(): () => ReturnType<typeof runtimeWithWakes> {
  const keep = shutDownAfter();
  return () => {
    const made = runtimeWithWakes();
    keep(made.runtime);
    return made;
  };
}

/**
 * The model's flow around a job with `wake_on_pattern: "ERROR"` that prints past a result's cut: it
 * starts `cmd` (call "start"), keeps working in the same run, and once `printed` exists (the job
 * touches it after its output) polls once (call "poll"). The poll's report; the run is
 * left open for the caller to settle.
 */
export async function pollInTheSameRun(runtime: ExecRuntime, cmd: string, printed: string): Promise<JobReport> {
  const request = prepareExec({ cmd, yield_time_ms: 250, wake_on_pattern: "ERROR" }, process.cwd(), process.env);
  const id = runningId(await runtime.exec(request, { callId: "start" }))!;
  runtime.completions.callEnded("start", false);
  runtime.completions.runStarted();
  await waitFor(() => existsSync(printed), "the job's output");
  const report = await runtime.interact({ jobId: id, window: { ms: 250 } }, { callId: "poll" });
  runtime.completions.callEnded("poll", false);
  return report;
}

/**
 * The run-end decision point with real jobs, one round: during a run, two jobs armed with wakes
 * exit; one is read by a poll in the same run and never wakes, the other wakes once when the run
 * settles (`tests/unit/core/decision-point.test.ts` once, `tests/stress/decision-point.test.ts`
 * beside CPU burners).
 */
export async function exitsReadAndUnreadInARun(round = 0): Promise<void> {
  const { runtime, woken } = runtimeWithWakes();
  try {
    runtime.completions.runStarted();
    const exec = (cmd: string) => prepareExec({ cmd, yield_time_ms: 250 }, process.cwd(), process.env);
    const read = runningId(await runtime.exec(exec("sleep 0.5; exit 3"), { onExit: "wake", callId: "start-read" }))!;
    const unread = runningId(await runtime.exec(exec("sleep 0.5; exit 4"), { onExit: "wake", callId: "start-unread" }))!;
    runtime.completions.callEnded("start-read", false);
    runtime.completions.callEnded("start-unread", false);
    // Both exits held by the run: decided, pending, and not sent.
    await waitFor(() => runtime.completions.waiting === 2, "both exits held", 20_000);
    assert.deepEqual(woken(), [], `round ${round}: nothing during the run`);
    const poll = await runtime.interact({ jobId: read, window: { ms: 1_000 } }, { callId: "poll" });
    assert.equal(poll.job.exit?.exitCode, 3);
    runtime.completions.callEnded("poll", false);
    runtime.completions.runSettled();
    assert.deepEqual(woken(), [unread], `round ${round}: only the exit nobody read`);
  } finally {
    await runtime.shutdown();
  }
}
