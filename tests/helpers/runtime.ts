/** Runtimes for unit tests: completion wakes recorded instead of sent to Pi, and shut down after the tests. */

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { WakeBatch } from "../../src/core/completion/wake-delivery.ts";
import type { JobReport } from "../../src/core/job/job-snapshot.ts";
import type { ShownPart } from "../../src/core/output/shown-part.ts";
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

/** `ids`: a shared id source, as runtimes of one Pi process have. */
export function runtimeWithWakes(ids?: () => number) {
  const runtime = new ExecRuntime({ ids });
  const batches: WakeBatch[] = [];
  runtime.completions.bindSender((batch) => batches.push(batch));
  /** The job ids every wake so far announced, in order. */
  const woken = () => batches.flatMap((batch) => batch.jobs.map((job) => job.jobId));
  return { runtime, batches, woken };
}

/**
 * The model's flow around a job with `wake_on_pattern: "ERROR"` that prints past a result's cut: it
 * starts `cmd` (call "start"), keeps working in the same run, and once `printed` exists (the job
 * touches it after its output) polls once (call "poll") read as `shown`. The poll's report; the run is
 * left open for the caller to settle.
 */
export async function pollInTheSameRun(runtime: ExecRuntime, cmd: string, printed: string, shown: ShownPart): Promise<JobReport> {
  const request = prepareExec({ cmd, yield_time_ms: 250, wake_on_pattern: "ERROR" }, process.cwd(), process.env);
  const id = runningId(await runtime.exec(request, { callId: "start" }))!;
  runtime.completions.callEnded("start", false);
  runtime.completions.runStarted();
  await waitFor(() => existsSync(printed), "the job's output");
  const report = await runtime.interact({ jobId: id, window: { ms: 250 }, shown }, { callId: "poll" });
  runtime.completions.callEnded("poll", false);
  return report;
}
