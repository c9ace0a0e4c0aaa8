import { MAX_TIMER_MS } from "./constants.ts";
import type { Job } from "./job.ts";

/** Why a wait ended. */
export type WaitEnd = "exited" | "deadline" | "aborted";

/**
 * Waits until the job's exit is final, the monotonic deadline passes, or `signal` aborts, whichever
 * comes first. Output arriving never ends the wait: a REPL call would otherwise return just its echo.
 * Aborting ends only the wait, never the job. When several ends are ready at once, the exit wins, so a
 * caller never reports "running" for a job that is already gone.
 */
export function waitForExit(job: Job, deadlineMono: number, signal?: AbortSignal): Promise<WaitEnd> {
  if (job.exit) return Promise.resolve("exited");
  if (signal?.aborted) return Promise.resolve("aborted");
  return new Promise<WaitEnd>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    // Node's timers overflow past 2^31-1 ms: a multi-day wait re-arms in chunks until the deadline.
    const arm = () => {
      const remaining = deadlineMono - performance.now();
      if (remaining <= 0) return settle("deadline");
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    };
    const settle = (end: WaitEnd) => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener("abort", onAbort);
      resolve(job.exit ? "exited" : end);
    };
    const onAbort = () => settle("aborted");
    const unsubscribe = job.onExit(() => settle("exited"));
    signal?.addEventListener("abort", onAbort, { once: true });
    arm();
  });
}
