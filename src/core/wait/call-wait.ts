/*
 * wait/ — a call's conditional wait: what may end it besides the exit, the window and a cancel.
 * The flow at a glance:
 * 1. request/ checks the conditions before anything runs: a compiled pattern (patterns/),
 *    `checkQuietMs` (quiet-watch.ts), `checkUntilListening` (listen-watch.ts).
 * 2. `Job.watchUntil` starts a CallWait (this file); the job's output feeds it, unread output first.
 * 3. `until_pattern` is tested line by line through the pattern's tester, the PTY echo of the
 *    call's input left out (pty-echo.ts); `until_quiet_ms` times the silence (quiet-watch.ts);
 *    `until_listening` reads the job's sockets (listen-watch.ts).
 * 4. The first condition met resolves `met`; a matched line cuts the call's read just after it.
 *
 * May import: shared, output, patterns.
 */
import type { RetainedOutput } from "../output/head-tail-buffer.ts";
import type { LinePattern } from "../patterns/line-pattern.ts";
import { BoundedLine, LineTester } from "../patterns/line-tester.ts";
import { PatternBudget } from "../patterns/pattern-budget.ts";
import { type Clock, realClock } from "../shared/clock.ts";
import { type ListenReader, type ListenTarget, ListenWatch } from "./listen-watch.ts";
import { EchoFilter } from "./pty-echo.ts";
import { QuietWatch } from "./quiet-watch.ts";

/** The ends a call's own conditions can bring. */
export type ConditionEnd = "matched" | "quiet" | "listening";

/** A call's conditions, checked before anything runs (request.ts). */
export interface UntilSpec {
  pattern?: LinePattern | undefined;
  quietMs?: number | undefined;
  listening?: ListenTarget | undefined;
}

export interface CallWaitOptions {
  /** The unfinished line the output continues: context for the line it ends, never tested alone. */
  partialLine?: string;
  /** Reads the job's listening addresses now (one scan of this job), for `until_listening`. */
  readListening?: ListenReader | undefined;
  /** `until_pattern` cost more than its share of the output and matches nothing more (pattern-budget.ts). */
  onSuspend?: () => void;
  clock?: Clock;
  cpuMs?: () => number;
}

/**
 * One call's conditional wait: `until_pattern` on the lines the job prints, `until_quiet_ms` on its
 * silence after new output, `until_listening` on its sockets; the first met ends it (`met`), and the
 * caller races that against the exit, the window, a cancel and a steer.
 *
 * Lines are judged as the model reads them: each chunk is rendered with the unfinished line carried
 * (line-stream.ts), so a line redrawn across chunks is judged as a terminal finally shows it. Every
 * line that gets text of the job's own is tested once it is complete, and the unfinished last line at
 * the end of every chunk that gave it some (a prompt matches without its line break). The echo of
 * what the call wrote to a PTY (pty-echo.ts) is never tested and is not new output.
 *
 * Owned here: once a line matched, the bytes up to its end belong to the call's read and nothing after
 * it does, whenever they arrive before the read (a terminal hands a line and its line end over in
 * separate reads): `begin` and `feed` say where each cuts. Rendering never adds or removes a line end,
 * so the cut in bytes is found by counting line ends.
 */
export class CallWait {
  readonly met: Promise<ConditionEnd>;
  private resolveMet!: (end: ConditionEnd) => void;
  private ended: ConditionEnd | undefined;
  /** Renders what arrives; tests `until_pattern` when there is one. */
  private readonly tester: LineTester;
  private readonly quiet: QuietWatch | undefined;
  private readonly listen: ListenWatch | undefined;
  private readonly echo = new EchoFilter();
  /** The unfinished line as it was last rendered: what the next chunk's text follows. */
  private given: string;
  /** The line being tested, echo left out. */
  private readonly line = new BoundedLine();
  /** The line got text of the job's own since it was last tested. */
  private grown = false;
  private matched: { line: string; open: boolean } | undefined;

  constructor(spec: UntilSpec, options: CallWaitOptions = {}) {
    this.met = new Promise((resolve) => {
      this.resolveMet = resolve;
    });
    const clock = options.clock ?? realClock;
    const partialLine = options.partialLine ?? "";
    const budget = spec.pattern && new PatternBudget(() => clock.now(), options.onSuspend, options.cpuMs);
    this.tester = new LineTester(spec.pattern, budget, { line: partialLine, prefilter: false });
    if (spec.quietMs !== undefined) this.quiet = new QuietWatch(spec.quietMs, () => this.meet("quiet"), clock);
    if (spec.listening && options.readListening)
      this.listen = new ListenWatch(spec.listening, options.readListening, () => this.meet("listening"), clock);
    this.given = partialLine;
    this.line.append(partialLine);
  }

  /** The condition that ended the wait, once one did. */
  get end(): ConditionEnd | undefined {
    return this.ended;
  }

  /** The line `until_pattern` matched (cut around the match for `matched_line`), when that ended the wait. */
  matchedLine(): string | undefined {
    return this.matched?.line;
  }

  /** What the check that ended the wait on `until_listening` read: the result shows it (and, for a URL, the answer's status). */
  listening(): string[] | undefined {
    return this.listen?.listening ? [...this.listen.listening] : undefined;
  }

  httpStatus(): number | undefined {
    return this.listen?.status;
  }

  /** When `until_quiet_ms` fires if nothing more is printed (undefined: not counting yet). */
  quietDeadline(): number | undefined {
    return this.quiet?.deadline();
  }

  /**
   * The call begins with `unread` (retained, not yet returned), last printed at `unreadSince`; the
   * socket checks start. Returns how many of those bytes (head, then tail) the call returns when a
   * line in them already matches; undefined otherwise.
   */
  begin(unread: RetainedOutput, unreadSince: number | undefined, now: number): number | undefined {
    let cut: number | undefined;
    const bytes = this.tester.pattern || this.quiet ? Buffer.concat([unread.head, unread.tail]) : undefined;
    const { text, redrawn } = bytes ? this.render(bytes) : { text: "", redrawn: false };
    if (bytes && (text.length > 0 || redrawn)) {
      cut = this.cut(bytes, text, this.matchLines(text, 0, redrawn));
      // Unread output is new to this call: the quiet time counts from when it was printed.
      this.quiet?.start(now, unreadSince ?? now);
      if (this.quiet?.quiet(now)) this.meet("quiet");
    }
    if (!this.ended) this.listen?.start();
    return cut;
  }

  /** After the call wrote to a PTY: the terminal's echo of it never matches and is not output. */
  wrote(written: string): void {
    this.echo.expect(written);
  }

  /**
   * A chunk arrived: how many of its bytes the call returns when a line in it matches, or when a line
   * matched before it (what ends that line; 0 once it has ended); undefined otherwise.
   */
  feed(chunk: Buffer, now: number): number | undefined {
    if (this.matched) return this.restOfLine(chunk);
    if (this.ended || (!this.tester.pattern && !this.quiet)) return undefined;
    const { text, redrawn } = this.render(chunk);
    if (text.length === 0 && !redrawn) return undefined;
    const echoChars = this.echo.take(text);
    if (echoChars < text.length) this.quiet?.output(now);
    return this.cut(chunk, text, this.matchLines(text, echoChars, redrawn));
  }

  /** The wait ended: no more timers or socket checks (the cut goes on until the read, see `stepJob`). */
  stop(): void {
    this.quiet?.stop();
    this.listen?.stop();
  }

  private meet(end: ConditionEnd): void {
    if (this.ended) return;
    this.ended = end;
    this.stop();
    this.resolveMet(end);
  }

  /**
   * The text `bytes` add: what follows the unfinished line as last rendered, or, when `bytes` redrew
   * that line (it no longer starts the same), the whole line as it shows now (`redrawn`) and what
   * follows it. Line ends are those of `bytes`, as {@link byteEnd} needs.
   */
  private render(bytes: Buffer): { text: string; redrawn: boolean } {
    const before = this.given;
    const whole = this.tester.render(bytes) + this.tester.pending();
    this.given = this.tester.pending();
    return whole.startsWith(before) ? { text: whole.slice(before.length), redrawn: false } : { text: whole, redrawn: true };
  }

  /**
   * Tests the lines `text` gives text of the job's own (its first `echoChars` are echo: left out of
   * the line, though an echoed line break still ends it); returns where in `text` the first matched
   * line ends (its `\n` included when complete).
   */
  private matchLines(text: string, echoChars: number, redrawn: boolean): number | undefined {
    if (!this.tester.pattern || this.tester.spent) return undefined;
    if (redrawn) this.line.clear();
    for (let start = 0; start < text.length; ) {
      const lf = text.indexOf("\n", start);
      const end = lf === -1 ? text.length : lf;
      const own = Math.max(start, Math.min(echoChars, end));
      if (own < end) {
        this.line.append(text.slice(own, end));
        this.grown = true;
      }
      if (lf === -1) break;
      // A line break of the job's own completes a line it printed (a blank one too); an echoed one does not.
      if (lf >= echoChars) this.grown = true;
      if (this.grown && this.test(false)) return lf + 1;
      this.line.clear();
      this.grown = false;
      start = lf + 1;
    }
    if (this.grown && !this.line.empty && this.test(true)) return text.length;
    this.grown = false;
    return undefined;
  }

  private test(open: boolean): boolean {
    this.grown = false;
    if (!this.line.parts().some((part) => this.tester.test(part))) return false;
    this.matched = { line: this.tester.excerpt(this.line.text()), open };
    this.meet("matched");
    return true;
  }

  /** Where a match at `end` of `text` cuts `bytes`, when one was found. */
  private cut(bytes: Buffer, text: string, end: number | undefined): number | undefined {
    return end === undefined ? undefined : byteEnd(bytes, text, end);
  }

  /** A chunk after the match: the part that ends the matched line, if it is still open; none of the rest. */
  private restOfLine(chunk: Buffer): number {
    if (!this.matched!.open) return 0;
    const lf = chunk.indexOf(0x0a);
    if (lf === -1) return chunk.length;
    this.matched!.open = false;
    return lf + 1;
  }
}

/**
 * Where in `bytes` the rendered `text` position `end` falls, for a cut just after a matched line: as
 * many line ends must follow the cut in the bytes as follow `end` in the text. A match that ends the
 * text (an unfinished last line, or the last line of the chunk) takes the whole chunk.
 */
function byteEnd(bytes: Buffer, text: string, end: number): number {
  if (end >= text.length) return bytes.length;
  let after = 0;
  for (let i = text.indexOf("\n", end); i !== -1; i = text.indexOf("\n", i + 1)) after++;
  // The remainder starts just after the line end that precedes those `after` line ends.
  let at = bytes.length;
  for (let seen = 0; seen <= after; seen++) {
    at = bytes.lastIndexOf(0x0a, at - 1);
    if (at === -1) return 0;
  }
  return at + 1;
}
