import type { DeafWakeJob, InputWakeJob } from "./input-wakes.ts";
import type { PatternWakeJob } from "./pattern-wakes.ts";

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
  /** Wakes of every kind in the batch beyond those listed. */
  more: number;
  /** Pattern wakes (at most `WAKE_MAX_LISTED`); absent when there is none. */
  patterns?: PatternWakeJob[];
  /** Input wakes: jobs waiting for input (at most `WAKE_MAX_LISTED`); absent when there is none. */
  inputs?: InputWakeJob[];
  /** Servers gone deaf (at most `WAKE_MAX_LISTED`); absent when there is none. */
  deaf?: DeafWakeJob[];
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

export type SetOnExitStatus = "disarmed" | "already_none" | "armed" | "already_armed" | "too_late";

/**
 * What the completion coordinator asks of the jobs at the decision point. (The host's run is told to
 * it instead: `runStarted` and `runSettled`.)
 */
export interface WakeHost {
  /** The job's leader exited and its last output is still being drained: its exit is near. */
  draining(jobId: number): boolean;
  /** The job still waits at the prompt its input wake named: nothing printed since, still reading its stdin. */
  waitsForInput(jobId: number): boolean;
}

export const NO_DRAINS: WakeHost = { draining: () => false, waitsForInput: () => true };
