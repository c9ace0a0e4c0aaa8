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
    const settle = (end: WaitEnd) => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener("abort", onAbort);
      resolve(job.exit ? "exited" : end);
    };
    const onAbort = () => settle("aborted");
    const unsubscribe = job.onExit(() => settle("exited"));
    signal?.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(() => settle("deadline"), Math.max(0, deadlineMono - performance.now()));
  });
}
