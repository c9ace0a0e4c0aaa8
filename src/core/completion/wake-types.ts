import type { InputWakeJob } from "./input-wakes.ts";
import type { PatternWakeJob } from "./pattern-wakes.ts";

/**
 * The words of completion wakes, private to completion/ but for what the Pi layer sends: what a
 * wake says about a job, a batch of wakes, the sender, and the clock the coordinator runs on.
 */

/** What a wake says about one job: bounded metadata, never output. */
export interface WakeJob {
  jobId: number;
  command: string;
  cwd: string;
  exitCode: number | null;
  signal: string | null;
  elapsedMs: number;
  logPath: string;
  /** Why the job ended, when the runtime ended it or it failed. */
  reason?: string;
}

export interface WakeBatch {
  /** Listed exits (at most `WAKE_MAX_LISTED`). */
  jobs: WakeJob[];
  /** Exits, pattern and input wakes in the batch beyond those listed. */
  more: number;
  /** Pattern wakes (at most `WAKE_MAX_LISTED`); absent when there is none. */
  patterns?: PatternWakeJob[];
  /** Input wakes: jobs that wait for input (at most `WAKE_MAX_LISTED`); absent when there is none. */
  inputs?: InputWakeJob[];
}

/** Delivers one batch. A synchronous throw means "not delivered": the batch is retried later. */
export type WakeSender = (batch: WakeBatch) => void;

export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
