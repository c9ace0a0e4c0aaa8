/**
 * What a person did to a job that the model has not heard of yet: how many bytes they typed into it
 * (the sessions picker's "Type into it"), and which of its wakes they disarmed from the picker. Each
 * is told once, in the model's next result on that job — of any tool: a poll or a write, a kill, a
 * listing, `set_on_exit` — and then forgotten. A stop by the person needs no entry here: the exit it
 * causes carries `killed_by: user`, which is reported exactly once with the exit.
 */

/** What the model learns of the user's typing. */
export interface UserInput {
  /** Every byte that went to the job, the Enter included. */
  bytes: number;
  /** The user gave up without sending anything (a dialog cancelled, the overlay left at once). */
  cancelled: boolean;
}

/** A wake the person disarmed: the exit wake (`on_exit`) or the `wake_on_pattern`. */
export type DisarmedWake = "exit_wake" | "wake_on_pattern";

/** The news, as one result tells it. */
export interface PersonNews {
  typed?: UserInput;
  disarmed?: DisarmedWake[];
}

/** Two stretches of typing told as one. */
export function combinedInput(earlier: UserInput | undefined, later: UserInput): UserInput {
  if (!earlier) return later;
  const bytes = earlier.bytes + later.bytes;
  return { bytes, cancelled: bytes === 0 && earlier.cancelled && later.cancelled };
}

/** One job's untold news: gathered as the person acts, taken whole by the model's next result. */
export class UntoldNews {
  private typed: UserInput | undefined;
  private readonly disarmed = new Set<DisarmedWake>();

  /** The person typed into the job (a stretch of typing from the picker). */
  userTyped(input: UserInput): void {
    this.typed = combinedInput(this.typed, input);
  }

  /** The person disarmed one of the job's wakes. */
  userDisarmed(wake: DisarmedWake): void {
    this.disarmed.add(wake);
  }

  /** Everything not told yet, once; undefined when there is nothing. */
  take(): PersonNews | undefined {
    if (!this.typed && this.disarmed.size === 0) return undefined;
    const news: PersonNews = {
      ...(this.typed ? { typed: this.typed } : {}),
      ...(this.disarmed.size > 0 ? { disarmed: [...this.disarmed] } : {}),
    };
    this.typed = undefined;
    this.disarmed.clear();
    return news;
  }
}
