/**
 * The matching work one pattern may cost one job's output: 20 ms per 64 KiB tested (about 3 MB/s, a
 * seventh of what every accepted pattern reaches on the benchmark's shapes), so no flood can freeze
 * Pi's event loop for seconds; a 250 ms warm-up credit pays for building the DFA's states.
 */
import type { LinePattern } from "./line-pattern.ts";

/** The share: a test of a line may cost this many ms per this many characters (at least MIN_CHARS' share). */
export const PATTERN_COST_MS = 20;
export const PATTERN_COST_BYTES = 64 * 1024;
const PATTERN_COST_MIN_CHARS = 64;
/** Work past the share is a debt later fast lines pay back; past this much the pattern stops. */
export const PATTERN_COST_DEBT_MS = 60;
/** Free work over the share at the start, while the engine builds its DFA states. */
export const PATTERN_COST_WARMUP_MS = 250;

/** Milliseconds of CPU this process has used (user and system). */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The matching work one pattern may cost one job's output (constants.ts: about 20 ms per 64 KiB,
 * with a warm-up credit and a small debt), measured on the watch's clock around each test. Past it
 * the budget is spent for good: every later test is false without running, and `onSpent` is called
 * once (the watch stops; the model is told once). Pure: the clocks are given (tests move them).
 * One budget may pay for several testers of the same pattern on the same job (the wake's watch and
 * the reads' matcher, read-matches.ts): each test is charged its own share, and every tester stops
 * when it is spent (`whenSpent`).
 *
 * A test's time on the wall clock includes any time the machine did not run this thread: on a
 * loaded machine one test can seem to take 100 ms. So before suspending, the debt is checked
 * against the CPU time the process used since the debt began: a debt larger than that was the
 * machine's pauses, not matching work, and is forgiven down to it.
 */
/**
 * Measured on the watch's clock around each test. Past the budget it is spent for good: every later
 * test is false without running and `onSpent` is called once (the watch stops, the model is told
 * once). One budget may pay for several testers of one pattern on one job (the wake's watch and the
 * reads' matcher): each test is charged, and every tester stops when it is spent (`whenSpent`).
 *
 * A test's wall time includes time the machine did not run this thread (on a loaded machine one test
 * can seem to take 100 ms): before suspending, the debt is cut down to the CPU time the process used
 * since it began, so a machine's pauses never count as matching work.
 */
export class PatternBudget {
  private credit = PATTERN_COST_WARMUP_MS;
  private debt = 0;
  private over = false;
  /** The process's CPU time when the debt last rose from zero. */
  private cpuAtDebt = 0;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly now: () => number,
    onSpent?: () => void,
    private readonly cpuMs: () => number = processCpuMs,
  ) {
    if (onSpent) this.listeners.push(onSpent);
  }

  /** Calls `listener` once when the budget runs out (never, if it already has). */
  whenSpent(listener: () => void): void {
    if (!this.over) this.listeners.push(listener);
  }

  /** The budget ran out: the pattern no longer runs. */
  get spent(): boolean {
    return this.over;
  }

  /** `pattern.test(line)`, paid for; false without running once the budget is spent. */
  test(pattern: LinePattern, line: string): boolean {
    if (this.over) return false;
    const started = this.now();
    const matched = pattern.test(line);
    this.charge(this.now() - started, line.length);
    return matched;
  }

  /** `ms` of matching work on a line of `chars` characters. */
  charge(ms: number, chars: number): void {
    const excess = ms - (Math.max(chars, PATTERN_COST_MIN_CHARS) * PATTERN_COST_MS) / PATTERN_COST_BYTES;
    if (excess <= 0) {
      this.debt = Math.max(0, this.debt + excess);
      return;
    }
    const fromCredit = Math.min(this.credit, excess);
    this.credit -= fromCredit;
    if (this.debt === 0 && excess > fromCredit) this.cpuAtDebt = this.cpuMs();
    this.debt += excess - fromCredit;
    if (this.debt <= PATTERN_COST_DEBT_MS || this.over) return;
    // Only what the process really computed counts (see the class comment).
    this.debt = Math.min(this.debt, this.cpuMs() - this.cpuAtDebt);
    if (this.debt <= PATTERN_COST_DEBT_MS) return;
    this.over = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
}
