/*
 * Who holds a job: the model's one attached call, or the user typing into it (the picker's "Type into
 * it", `ask_user`); the `wake_on_pattern` watch listens only while neither does. The user's keys are
 * counted, sent and never kept; from the first key the job is `typedInto` for good (no wake quotes
 * its output). What a person did is told once, in the model's next result on the job.
 */
import type { LinePattern } from "../patterns/line-pattern.ts";
import { TYPING_REPLY_MS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import { PatternWatch, type PatternWatchOptions, type UnreadOutput } from "../wake-watch/pattern-watch.ts";

/** A pattern parameter that was suspended for costing too much on a job's output. */
export type SuspendedPattern = "until_pattern" | "wake_on_pattern";

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
class UntoldNews {
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

/** Sends the user's bytes to the job (through its stdin, after anything queued before); resolves to how many it took. */
export type TypedSender = (bytes: Buffer) => Promise<number>;

/** The user holds the job's keyboard until `end`. */
export class TypingSession {
  private typed = 0;
  private over = false;
  private gaveUp = false;
  private readonly ending = new AbortController();

  constructor(
    private readonly sender: TypedSender,
    private readonly ended: (input: UserInput) => void,
  ) {}

  /** Bytes sent so far. */
  get bytes(): number {
    return this.typed;
  }

  /** Fires when the session ends — the person is done, or the job ended: a dialog or overlay open for it closes. */
  get closed(): AbortSignal {
    return this.ending.signal;
  }

  /** What the model learns: the count, and whether the person gave up (as the first `end` said). */
  get input(): UserInput {
    return { bytes: this.typed, cancelled: this.gaveUp && this.typed === 0 };
  }

  /** Sends what the user typed, as typed; counted, never kept. Bytes the job's stdin refused are not counted. */
  async type(bytes: Uint8Array): Promise<void> {
    if (this.over || bytes.length === 0) return;
    this.typed += bytes.length;
    const taken = await this.sender(Buffer.from(bytes));
    this.typed -= bytes.length - taken;
  }

  /** The user lets go, or the job ended; `cancelled` counts only with nothing typed, and only the first call counts. */
  end(cancelled = false): UserInput {
    if (!this.over) {
      this.over = true;
      this.gaveUp = cancelled;
      this.ended(this.input);
      this.ending.abort();
    }
    return this.input;
  }
}

/** Where a typing session's count goes: the call that asked the user, or the model's next result on the job. */
export type TypingReport = "caller" | "next-result";

export class JobHolders {
  private call: string | undefined;
  private typing: TypingSession | undefined;
  private watch: PatternWatch | undefined;
  private typed = false;
  /** What the person did to the job that the model has not been told yet. */
  readonly news = new UntoldNews();
  /** Patterns suspended since the model's last result on the job. */
  private readonly suspended = new Set<SuspendedPattern>();

  constructor(private readonly jobId: number) {}

  /** The tool name of the call attached to the job, if any. */
  get attached(): string | undefined {
    return this.call;
  }

  /** The user is typing into the job. */
  get userTyping(): boolean {
    return this.typing !== undefined;
  }

  /** A person has typed into the job (a first key was sent): its wakes never quote its output. */
  get typedInto(): boolean {
    return this.typed;
  }

  /** Attaches the model's call `tool`; false when another call is attached already. */
  attach(tool: string): boolean {
    if (this.call) return false;
    this.call = tool;
    this.listen();
    return true;
  }

  /** The call lets go; `unread`: what it left unread, which the pattern watch tests from its next line start. */
  detach(unread?: () => UnreadOutput): void {
    this.call = undefined;
    if (this.watch && !this.typing && unread) this.watch.resume(unread());
    else this.listen();
  }

  /** Refuses, before anything is written, the model's writes, resizes, `ask_user` and kills while the user types. */
  refuseWhileTyping(): void {
    if (!this.typing) return;
    throw new ExecRequestError(
      `the user is typing into session ${this.jobId}; poll it (write_stdin without chars), or wait for them to finish. Nothing was written.`,
    );
  }

  /** The user takes the keyboard; undefined when they hold it already. */
  startTyping(sender: TypedSender, report: TypingReport): TypingSession | undefined {
    if (this.typing) return undefined;
    const firstKey: TypedSender = (bytes) => {
      this.typed = true; // before the bytes leave: no echo of them can come earlier
      return sender(bytes);
    };
    const session = new TypingSession(firstKey, (input) => {
      this.typing = undefined;
      // What the program prints right after is the reply to the typing (an echo): a wake about it would be noise.
      this.watch?.ignoreFor(TYPING_REPLY_MS);
      this.listen();
      if (report === "next-result") this.news.userTyped(input);
    });
    this.typing = session;
    this.listen();
    return session;
  }

  /** `wake_on_pattern` while nobody holds the job; undefined stops it. A pattern over its cost share stops, and the model is told. */
  watchLines(pattern: LinePattern | undefined, options: PatternWatchOptions): void {
    this.watch?.stop();
    const onSuspend = () => {
      this.noteSuspended("wake_on_pattern");
      options.onSuspend?.();
    };
    this.watch = pattern ? new PatternWatch(pattern, { ...options, onSuspend }) : undefined;
    this.listen();
  }
  /** `param` (`wake_on_pattern`, `until_pattern`) was suspended on this job: the model's next result says so, once. */
  noteSuspended(param: SuspendedPattern): void {
    this.suspended.add(param);
  }

  /** The patterns suspended since the model's last result on the job, once. */
  takeSuspended(): SuspendedPattern[] | undefined {
    if (this.suspended.size === 0) return undefined;
    const taken = [...this.suspended].sort();
    this.suspended.clear();
    return taken;
  }

  /** The job printed `chunk`. */
  printed(chunk: Buffer): void {
    this.watch?.feed(chunk);
  }

  /** The job is over: nothing more is watched or typed. */
  close(): void {
    this.watch?.stop(true);
    this.typing?.end();
  }

  private listen(): void {
    this.watch?.suspend(this.call !== undefined || this.typing !== undefined);
  }
}
