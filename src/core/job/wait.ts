import { MAX_TIMER_MS } from "../shared/constants.ts";
import type { ConditionEnd } from "../wait/call-wait.ts";

/**
 * Why a wait ended: the job's exit, the window's end, the call's cancel (Esc), a steer (the user
 * typed a message Pi delivers as a steer), or a condition of a conditional wait: a line matched
 * `until_pattern`, the job went quiet for `until_quiet_ms`, or it listened as `until_listening` asked;
 * or the shell exited while processes it started run on (`background`: the job goes on without it).
 */
export type WaitEnd = "exited" | "deadline" | "aborted" | "steered" | "matched" | "quiet" | "listening" | "background";

/** What else may end a wait besides the exit and the deadline. */
export interface WaitEnds {
  /** The call's cancel (Esc). */
  signal?: AbortSignal | undefined;
  /** A steer from the user: every attached wait ends, the job runs on. */
  steer?: AbortSignal | undefined;
  /** A conditional wait's condition. */
  condition?: Promise<ConditionEnd> | undefined;
  /** Subscribes to the shell's exit leaving processes running (after a short settle); returns an unsubscribe. */
  background?: ((listener: () => void) => () => void) | undefined;
}

/** What a wait needs of a job: whether its exit is final, and a call when it becomes final. */
export interface ExitSource {
  readonly exit: unknown;
  /** Calls `listener` once the exit is final; returns an unsubscribe. */
  onExit(listener: () => void): () => void;
}

/**
 * Waits until the job's exit is final, the monotonic deadline passes, or one of `ends` happens,
 * whichever comes first. Output arriving never ends a wait by itself (a REPL call would otherwise
 * return just its echo); only a condition the call asked for does. A cancel or a steer ends only the
 * wait, never the job. When several ends are ready at once, the exit wins, so a caller never reports
 * "running" for a job that is already gone.
 */
export function waitForExit(job: ExitSource, deadlineMono: number, ends: WaitEnds = {}): Promise<WaitEnd> {
  const { signal, steer, condition, background } = ends;
  if (job.exit) return Promise.resolve("exited");
  if (signal?.aborted) return Promise.resolve("aborted");
  if (steer?.aborted) return Promise.resolve("steered");
  return new Promise<WaitEnd>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    // Node's timers overflow past 2^31-1 ms: a multi-day wait re-arms in chunks until the deadline.
    const arm = () => {
      const remaining = deadlineMono - performance.now();
      if (remaining <= 0) return settle("deadline");
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    };
    const settle = (end: WaitEnd) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      unsubscribeBackground?.();
      signal?.removeEventListener("abort", onAbort);
      steer?.removeEventListener("abort", onSteer);
      resolve(job.exit ? "exited" : end);
    };
    const onAbort = () => settle("aborted");
    const onSteer = () => settle("steered");
    const unsubscribe = job.onExit(() => settle("exited"));
    const unsubscribeBackground = background?.(() => settle("background"));
    signal?.addEventListener("abort", onAbort, { once: true });
    steer?.addEventListener("abort", onSteer, { once: true });
    void condition?.then(settle);
    arm();
  });
}
