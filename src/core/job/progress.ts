import { UPDATE_INTERVAL_MS } from "../shared/constants.ts";
import type { Job } from "./job.ts";
import type { JobSnapshot, WaitProgress } from "./job-snapshot.ts";

/** Who wants to hear about a wait's progress, and how often when nothing happens. */
export interface ProgressOptions {
  onProgress?: ((progress: WaitProgress) => void) | undefined;
  quietRefreshMs?: number | undefined;
}

/**
 * Reports a wait's progress: at once when output already waits for the call (a poll shows it from its
 * first moment), else at the first check (a call that ends sooner, most commands, costs Pi no update
 * at all; the row draws its own clock); then when output arrived (checked every 250 ms, so a flood
 * costs one update per interval, not one per chunk), and when quiet only every `quietRefreshMs` if
 * that is set (the row's own clock ticks in between).
 */
export function watchProgress(job: Job, sinceTotal: number, call: ProgressOptions, snapshot: () => JobSnapshot): () => void {
  const { onProgress, quietRefreshMs } = call;
  if (!onProgress) return () => {};
  const start = performance.now();
  let seen = job.outputBytesTotal;
  let last = start;
  let reported = false;
  const report = (now: number, total: number) => {
    reported = true;
    try {
      onProgress({ job: snapshot(), preview: job.previewText(sinceTotal), outputBytes: total - sinceTotal, elapsedMs: now - start });
    } catch {
      // The UI failing to draw must not end the wait.
    }
  };
  if (seen > sinceTotal) report(start, seen);
  const timer = setInterval(() => {
    const now = performance.now();
    const total = job.outputBytesTotal;
    if (reported && total === seen && (quietRefreshMs === undefined || now - last < quietRefreshMs)) return;
    seen = total;
    last = now;
    report(now, total);
  }, UPDATE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
