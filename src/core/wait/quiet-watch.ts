/**
 * `until_quiet_ms`: fires once the job printed nothing for `quietMs` after printing something new in
 * this call (a slow starter is not quiet before its first output). One timer at most, moved on
 * lazily, never one per chunk; `checkQuietMs` refuses a bad value before anything runs.
 */
import { type Clock, realClock } from "../shared/clock.ts";
import { MAX_QUIET_MS, MIN_QUIET_MS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";

/** `until_quiet_ms` as given, or an error saying what is allowed. */
export function checkQuietMs(value: number): number {
  if (!Number.isInteger(value) || value < MIN_QUIET_MS || value > MAX_QUIET_MS) {
    throw new ExecRequestError(
      `until_quiet_ms must be a whole number of milliseconds from ${MIN_QUIET_MS} to ${MAX_QUIET_MS}, got ${value}. ` +
        "It ends the wait once the job has printed nothing for that long after printing something new (e.g. 2000). Nothing was started or written.",
    );
  }
  return value;
}

export class QuietWatch {
  /** When the job last printed something new to this call; undefined until it has. */
  private last: number | undefined;
  private timer: unknown;
  private fired = false;
  private stopped = false;

  constructor(
    readonly quietMs: number,
    private readonly onQuiet?: () => void,
    private readonly clock: Clock = realClock,
  ) {}

  /** The call begins; output it returns unread counts from when it was printed (`unreadSince`). */
  start(now: number, unreadSince?: number): void {
    if (unreadSince !== undefined) this.noteOutput(Math.min(now, unreadSince));
  }

  /** The job's own output arrived (not the echo of the call's input). */
  output(now: number): void {
    this.noteOutput(now);
  }

  /** When it fires if nothing more is printed; undefined before any output. */
  deadline(): number | undefined {
    return this.last === undefined ? undefined : this.last + this.quietMs;
  }

  quiet(now: number): boolean {
    const deadline = this.deadline();
    return deadline !== undefined && now >= deadline;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private noteOutput(at: number): void {
    if (this.last === undefined || at > this.last) this.last = at;
    // A timer already running checks the new deadline when it ends: no timer per chunk.
    if (this.onQuiet && this.timer === undefined && !this.fired && !this.stopped) this.arm();
  }

  private arm(): void {
    const wait = Math.max(0, this.deadline()! - this.clock.now());
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.stopped || this.fired) return;
      if (!this.quiet(this.clock.now())) return this.arm(); // output came meanwhile: wait for the rest
      this.fired = true;
      this.onQuiet!();
    }, wait);
  }
}
