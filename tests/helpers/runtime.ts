/** A runtime for unit tests whose completion wakes are recorded here instead of sent to Pi. */

import type { WakeBatch } from "../../src/core/completion/wakes.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";

/** `ids`: a shared id source, as runtimes of one Pi process have. */
export function runtimeWithWakes(ids?: () => number) {
  const runtime = new ExecRuntime({ ids });
  const batches: WakeBatch[] = [];
  runtime.completions.bindSender((batch) => batches.push(batch));
  /** The job ids every wake so far announced, in order. */
  const woken = () => batches.flatMap((batch) => batch.jobs.map((job) => job.jobId));
  return { runtime, batches, woken };
}
