/**
 * The completion coordinator on a {@link SteppedClock}, for tests of its wake rules: every batch it
 * sends is collected in `sent`, `draining` says which jobs are still draining their exit, `answered`
 * which no longer wait at the prompt their input wake names, and time moves only with `clock.advance(ms)`. `exitWake` builds an exit to hand it.
 */
import { CompletionCoordinator, type WakeBatch, type WakeJob } from "../../src/core/completion/wakes.ts";
import { WAKE_DEBOUNCE_MS } from "../../src/core/shared/constants.ts";
import { SteppedClock } from "./clock.ts";

/** The pattern-wake cooldown these tests use: longer than any stretch a test advances by accident. */
export const TEST_COOLDOWN_MS = 30_000;

export interface SteppedWakes {
  clock: SteppedClock;
  sent: WakeBatch[];
  draining: Set<number>;
  answered: Set<number>;
  coordinator: CompletionCoordinator;
}

/**
 * A coordinator on `clock` (debounce WAKE_DEBOUNCE_MS, cooldown TEST_COOLDOWN_MS) that hands each batch
 * to `send`; jobs in `draining` count as draining their exit, jobs in `answered` as no longer waiting for input.
 */
export function coordinatorOn(
  clock: SteppedClock,
  send: (batch: WakeBatch) => void,
  draining = new Set<number>(),
  answered = new Set<number>(),
): CompletionCoordinator {
  return new CompletionCoordinator(send, clock, WAKE_DEBOUNCE_MS, TEST_COOLDOWN_MS, {
    draining: (jobId) => draining.has(jobId),
    waitsForInput: (jobId) => !answered.has(jobId),
  });
}

/** A fresh clock at 0, an empty `sent`, no job draining or answered, and a coordinator over them. */
export function steppedWakes(): SteppedWakes {
  const clock = new SteppedClock();
  const sent: WakeBatch[] = [];
  const draining = new Set<number>();
  const answered = new Set<number>();
  return { clock, sent, draining, answered, coordinator: coordinatorOn(clock, (batch) => sent.push(batch), draining, answered) };
}

/** The exit of job `jobId` (code 0 unless `over` says otherwise). */
export const exitWake = (jobId: number, over: Partial<WakeJob> = {}): WakeJob => ({
  jobId,
  command: `job ${jobId}`,
  cwd: "/w",
  exitCode: 0,
  signal: null,
  elapsedMs: 1000,
  logPath: `/l/${jobId}`,
  ...over,
});
