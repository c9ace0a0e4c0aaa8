/** Runtimes for unit tests: completion wakes recorded instead of sent to Pi, and shut down after the tests. */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { WakeBatch } from "../../src/core/completion/wakes.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";

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
