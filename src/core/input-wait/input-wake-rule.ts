/**
 * When a job that waits for input should wake the model (SPEC §3e): once it has waited, untouched,
 * for the configured time — no call attached, the user not typing, nothing printed, `input_wait`
 * likely at every probe — and only once per prompt: after a wake, not again until the job has
 * printed more and waits again. The rule only decides; the caller probes and sends the wake.
 *
 * Interface:
 * - `inputWakeMs(env)`: `PI_UNIFIED_EXEC_INPUT_WAKE_S` in ms (2–3600 s; `0` off: undefined; anything
 *   else the default 30 s).
 * - `new InputWakeRule(afterMs)`, then `observe(now, held, bytes, probe)` at each probe: `held` a call
 *   or the user holds the job, `bytes` its output so far, `probe()` whether it waits for input now
 *   (called only when the answer matters). Returns true when the wake is due (once per prompt).
 * - `stillDue(bytes, probe)` at the decision point: the wake still holds, else it is dropped.
 */
import { INPUT_WAKE_ENV, INPUT_WAKE_S, MAX_INPUT_WAKE_S, MIN_INPUT_WAKE_S } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/** How long a job must wait for input before it wakes the model, in ms; undefined when turned off. */
export function inputWakeMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[INPUT_WAKE_ENV]?.trim();
  if (raw === "0") return undefined;
  const seconds = wholeNumber(raw);
  const valid = seconds !== undefined && seconds >= MIN_INPUT_WAKE_S && seconds <= MAX_INPUT_WAKE_S;
  return (valid ? seconds : INPUT_WAKE_S) * 1000;
}

export class InputWakeRule {
  /** When the current wait began to count (undefined: not waiting, or held). */
  private since: number | undefined;
  /** The output count the current wait is at: more output is a new prompt. */
  private bytes = -1;
  /** The output count of the prompt the last wake was for. */
  private wokeFor: number | undefined;

  constructor(private readonly afterMs: number) {}

  observe(now: number, held: boolean, bytes: number, probe: () => boolean): boolean {
    if (bytes !== this.bytes) {
      this.bytes = bytes;
      this.since = undefined;
    }
    if (held || this.wokeFor === bytes || !probe()) {
      this.since = undefined;
      return false;
    }
    this.since ??= now;
    if (now - this.since < this.afterMs) return false;
    this.wokeFor = bytes;
    this.since = undefined;
    return true;
  }

  /** As the wake goes out: the job printed nothing since and still waits. If not, a later wait may wake again. */
  stillDue(bytes: number, probe: () => boolean): boolean {
    if (this.wokeFor === bytes && probe()) return true;
    this.wokeFor = undefined;
    return false;
  }
}
