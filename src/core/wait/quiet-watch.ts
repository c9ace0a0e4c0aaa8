/**
 * The `until_quiet_ms` condition: it fires once the job has printed nothing for `quietMs` after
 * printing something new in this call, so "run it and give me the output once it settles" costs one
 * call. A slow starter is not quiet before its first output. Owns the validation of the value and the
 * timing rule; one timer at most, re-armed lazily (never one per chunk).
 *
 * Interface (one watch per call that has `until_quiet_ms`; times are monotonic milliseconds, e.g.
 * `performance.now()`):
 * - `checkQuietMs(value)`: the validated value, or an `ExecRequestError` (call before anything runs).
 * - `new QuietWatch(quietMs, onQuiet?, clock?)`.
 * - `start(now, unreadSince?)`: the call begins. When output printed before the call is still unread
 *   (it is returned by this call), pass when the job last printed it: that output is new to this call,
 *   so the quiet time counts from then (a job that went quiet long ago with unread output fires at once).
 * - `output(now)`: call for each chunk of the job's own output (not the echo of the call's input).
 * - `deadline()`: when the condition fires if nothing more is printed; undefined before any output.
 * - `quiet(now)`: whether it has fired by `now` (for a caller that runs its own timer to `deadline()`).
 * - `onQuiet` is called once, from the watch's own timer, when it fires; `stop()` cancels the timer.
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

  start(now: number, unreadSince?: number): void {
    if (unreadSince !== undefined) this.noteOutput(Math.min(now, unreadSince));
  }

  output(now: number): void {
    this.noteOutput(now);
  }

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
