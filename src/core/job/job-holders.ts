import type { LinePattern } from "../patterns/line-pattern.ts";
import { TYPING_REPLY_MS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import { PatternWatch, type PatternWatchOptions, type UnreadOutput } from "../wake-watch/pattern-watch.ts";
import { UntoldNews, type UserInput } from "./person-news.ts";

export type { UserInput } from "./person-news.ts";

/** A pattern parameter that was suspended for costing too much on a job's output. */
export type SuspendedPattern = "until_pattern" | "wake_on_pattern";

/**
 * Who holds a job right now, and what that rules out: the model's one attached call (a poll or a
 * write, see attached-call.ts), and the user typing into it (the sessions picker's "Type into it",
 * or `write_stdin`'s `ask_user`). The `wake_on_pattern` watch listens only while neither holds it:
 * lines a call returns are its own, and what a user's typing makes a program print is not the
 * model's to be woken by.
 *
 * The user's keys are a secret by default: a {@link TypingSession} counts them and sends them, and
 * keeps nothing — no result, `details`, wake, row or log ever holds them. What the model learns is a
 * count (`user_input: N bytes`), for the call that asked or the model's next result on the job
 * ({@link UntoldNews}). From the first key on, the job is `typedInto` for good: no wake of it quotes
 * its output again (whatever it prints may carry what was typed), with no timing window involved.
 */

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

  get active(): boolean {
    return !this.over;
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

  /**
   * The user lets go (or the job ended: `cancelled` false); `cancelled` when they ended without
   * sending (it counts only with nothing typed). Only the first call counts.
   */
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

  /**
   * Refuses, before anything is written, what the model may not do while the user types: writes,
   * resizes, `ask_user`, `kill_session`. Polls and listings go on.
   */
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

  /**
   * Tests later lines against `pattern` while nobody holds the job (`wake_on_pattern`); undefined stops
   * it. A pattern that cost this job's output more than its share stops (`options.onSuspend`), and
   * the model's next result is told too.
   */
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
