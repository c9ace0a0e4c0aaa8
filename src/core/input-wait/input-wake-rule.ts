/**
 * When a job that waits for input wakes the model (SPEC §3e): once it waited, untouched (no call, no
 * typing, nothing printed, `input_wait` likely at every probe), for the configured time; once per
 * prompt: not again until it printed more and waits again. It only decides; the caller probes.
 */
import { INPUT_WAKE_ENV } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/** 30 s: a prompt a script answers or a slow start is not stuck; bounds 2–3600 s (SPEC §3e). */
const INPUT_WAKE_S = 30;
const MIN_INPUT_WAKE_S = 2;
const MAX_INPUT_WAKE_S = 3_600;

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

  /** At each probe: `held` by a call or the user, `bytes` printed so far, `probe()` whether it waits now (asked only when it matters); true when the wake is due. */
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
