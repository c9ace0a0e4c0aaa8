/**
 * The completion ledger on a {@link SteppedClock}, for tests of its wake rules: every batch it sends
 * is collected in `sent`, `draining` says which jobs are still draining their exit, `answered` which
 * no longer wait at the prompt their input wake names, and time moves only with `clock.advance(ms)`.
 * `exitWake` builds an exit to hand it, `exitOf` the exit as a call's result reports it.
 */
import { CompletionLedger, WAKE_DEBOUNCE_MS } from "../../src/core/completion/completion-ledger.ts";
import type { WakeBatch } from "../../src/core/completion/wake-delivery.ts";
import type { ObservedExit } from "../../src/core/job/attached-call.ts";
import type { WakeJob } from "../../src/core/job/job-snapshot.ts";
import type { Clock } from "../../src/core/shared/clock.ts";
import { SteppedClock } from "./clock.ts";

/** The pattern-wake cooldown these tests use: longer than any stretch a test advances by accident. */
export const TEST_COOLDOWN_MS = 30_000;

export type TestLedger = CompletionLedger<unknown>;

export interface SteppedWakes {
  clock: SteppedClock;
  sent: WakeBatch[];
  draining: Set<number>;
  answered: Set<number>;
  /** Jobs whose server listens again (their deaf notice is no news). */
  hearing: Set<number>;
  ledger: TestLedger;
}

/**
 * A ledger on `clock` (debounce WAKE_DEBOUNCE_MS, cooldown TEST_COOLDOWN_MS, no turn budget unless
 * `wakeTurns` says) that hands each batch to `send` (none bound when undefined); jobs in `draining`
 * count as draining their exit, jobs in `answered` as no longer waiting for input, jobs in `hearing`
 * as servers that listen again.
 */
export function ledgerOn(
  clock: Clock,
  send: ((batch: WakeBatch) => void) | undefined,
  draining = new Set<number>(),
  answered = new Set<number>(),
  wakeTurns = 0,
  hearing = new Set<number>(),
): TestLedger {
  const ledger = new CompletionLedger<unknown>(
    {
      draining: (jobId) => draining.has(jobId),
      waitsForInput: (jobId) => !answered.has(jobId),
      typedInto: () => false,
      listensAgain: (jobId) => hearing.has(jobId),
    },
    { clock, debounceMs: WAKE_DEBOUNCE_MS, patternCooldownMs: TEST_COOLDOWN_MS, wakeTurns },
  );
  ledger.bindSender(send);
  return ledger;
}

/** A fresh clock at 0, an empty `sent`, no job draining or answered, and a ledger over them (`wakeTurns`: its turn budget, 0 none). */
export function steppedWakes(wakeTurns = 0): SteppedWakes {
  const clock = new SteppedClock();
  const sent: WakeBatch[] = [];
  const draining = new Set<number>();
  const answered = new Set<number>();
  const hearing = new Set<number>();
  const ledger = ledgerOn(clock, (batch) => sent.push(batch), draining, answered, wakeTurns, hearing);
  return { clock, sent, draining, answered, hearing, ledger };
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

/** Job `jobId`'s exit as a poll's result carries it. */
export const exitOf = (jobId: number): ObservedExit => ({ kind: "write", jobId, exitCode: 0, signal: null });

/** A report for `Lease.settle` (the ledger keeps it only for nested replays). */
export const REPORT = {};
