/**
 * One pattern tested on a job's lines as the model reads them: the one path of `until_pattern`'s wait
 * (call-wait.ts), `wake_on_pattern`'s watch (pattern-watch.ts) and the lines of each read it matches
 * (read-matches.ts). Bytes are rendered with the unfinished line carried (line-stream.ts: a line
 * redrawn across reads is judged as it finally shows), a line longer than {@link LINE_TEST_CHARS} is
 * kept as its two halves, a plain run of lines that cannot match is passed over unrendered at `memchr`
 * speed (required-text.ts), and every test is paid from the pattern's budget (pattern-budget.ts).
 */
import { LineStream } from "../output/line-stream.ts";
import { LINE_TEST_CHARS } from "../shared/constants.ts";
import { codePointBoundary, type LinePattern } from "./line-pattern.ts";
import type { PatternBudget } from "./pattern-budget.ts";
import { mayHoldMatch, plainChunk, type RequiredText, requiredText } from "./required-text.ts";

export interface LineTesterOptions {
  /** Pass over plain lines that cannot match (default); false tests every line (tests compare the two). */
  prefilter?: boolean | undefined;
  /** The unfinished line the first bytes continue ("" at a line start). */
  line?: string;
}

export class LineTester {
  private utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  private stream: LineStream;
  /** The start of the unfinished line, once the renderer let it go as too wide to keep. */
  private readonly wide = new BoundedLine();
  private readonly required: RequiredText | undefined;
  /** The last byte rendered ended a line and the renderer holds nothing back: the next bytes start a line. */
  private atLineStart: boolean;

  /** `budget`: what the tests are paid from (none: unpaid, in tests). No pattern: it only renders (a wait on quiet alone). */
  constructor(
    readonly pattern: LinePattern | undefined,
    private readonly budget?: PatternBudget,
    options: LineTesterOptions = {},
  ) {
    this.required = options.prefilter === false || !pattern ? undefined : requiredText(pattern.source);
    this.stream = new LineStream(options.line ?? "");
    this.atLineStart = !options.line;
  }

  /** The budget ran out: nothing is tested any more. */
  get spent(): boolean {
    return this.budget?.spent ?? false;
  }

  /** Does the pattern match `line` (bounded as `LinePattern.test` says)? Paid; false once the budget is spent. */
  test(line: string): boolean {
    if (!this.pattern) return false;
    return this.budget ? this.budget.test(this.pattern, line) : this.pattern.test(line);
  }

  /** `line` as a result or a wake shows it: at most `chars` characters around the match. */
  excerpt(line: string, chars?: number): string {
    return this.pattern ? this.pattern.excerpt(line, chars) : line;
  }

  /**
   * Renders `bytes` after what came before: the text of the lines they complete, each with its line
   * end (and the start of an unfinished line grown too wide to keep); the rest is kept (`pending`).
   */
  render(bytes: Uint8Array): string {
    if (bytes.length === 0) return "";
    const text = this.stream.write(this.utf8.decode(bytes, { stream: true }));
    this.atLineStart = bytes[bytes.length - 1] === 0x0a && !this.stream.holding;
    return text;
  }

  /** The unfinished line as the renderer keeps it (without a start let go as too wide). */
  pending(): string {
    return this.stream.pending();
  }

  /**
   * Each line `bytes` complete, whole as the model reads it, to `visit`; the unfinished line is kept.
   * From a line start, a plain run of lines that cannot match is passed over: only what follows its
   * last line end is rendered.
   */
  lines(bytes: Uint8Array, visit: (line: string) => void): void {
    let rest = bytes;
    if (!this.atLineStart) {
      const end = rest.indexOf(0x0a) + 1 || rest.length;
      this.split(this.render(rest.subarray(0, end)), visit);
      rest = rest.subarray(end);
    }
    if (this.atLineStart && this.required && plainChunk(rest) && !mayHoldMatch(this.required, rest))
      rest = rest.subarray(rest.lastIndexOf(0x0a) + 1);
    this.split(this.render(rest), visit);
  }

  /** The unfinished line as it shows now, bounded. */
  unfinished(): string {
    if (this.wide.empty) return this.stream.pending();
    const line = this.wide.copy();
    line.append(this.stream.pending());
    return line.text();
  }

  /** A fresh start at a line start: what was kept of the line before is dropped. */
  restart(): void {
    this.utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
    this.stream = new LineStream();
    this.wide.clear();
    this.atLineStart = true;
  }

  /** Hands each complete line of rendered `text` to `visit`, joined with the start kept of it. */
  private split(text: string, visit: (line: string) => void): void {
    let start = 0;
    for (let lf = text.indexOf("\n"); lf !== -1; lf = text.indexOf("\n", start)) {
      let line = text.slice(start, lf);
      start = lf + 1;
      if (!this.wide.empty) {
        this.wide.append(line);
        line = this.wide.text();
        this.wide.clear();
      }
      visit(line);
    }
    if (start < text.length) this.wide.append(text.slice(start));
  }
}

const HALF = LINE_TEST_CHARS / 2;

/**
 * One line's text, bounded: whole while it is at most `LINE_TEST_CHARS`; beyond that its first and
 * last halves, exactly the parts `LinePattern.test` would look at.
 */
export class BoundedLine {
  private head = "";
  private tail = "";
  private long = false;

  append(text: string): void {
    if (!this.long && this.head.length + text.length <= LINE_TEST_CHARS) {
      this.head += text;
      return;
    }
    if (!this.long) {
      // Crossing the bound: the first half of the line, and its last half (from both pieces).
      const { head } = this;
      this.head = keepWhole(head.length > HALF ? head.slice(0, HALF + 1) : head + text.slice(0, HALF + 1 - head.length), true);
      this.tail = keepWhole(text.length > HALF ? text.slice(-HALF - 1) : head.slice(head.length - (HALF + 1 - text.length)) + text, false);
      this.long = true;
      return;
    }
    this.tail = keepWhole(text.length > HALF ? text.slice(-HALF - 1) : (this.tail + text).slice(-HALF - 1), false);
  }

  /** A line with the same text, to append to without changing this one. */
  copy(): BoundedLine {
    const line = new BoundedLine();
    line.head = this.head;
    line.tail = this.tail;
    line.long = this.long;
    return line;
  }

  /** The line as a test shows it: whole, or its two kept halves with a visible cut between them. */
  text(): string {
    return this.long ? `${this.head}…${this.tail}` : this.head;
  }

  /** The parts to test, as `testedParts` would cut the whole line. */
  parts(): string[] {
    return this.long ? [this.head, this.tail] : [this.head];
  }

  get empty(): boolean {
    return !this.long && this.head.length === 0;
  }

  clear(): void {
    this.head = "";
    this.tail = "";
    this.long = false;
  }
}

/**
 * `piece` (up to one unit longer than a half) cut to a half as `testedParts` cuts a line, so no
 * surrogate pair is split: the head ends before a pair the cut would split, the tail starts with it.
 */
function keepWhole(piece: string, head: boolean): string {
  if (piece.length <= HALF) return piece;
  return head ? piece.slice(0, codePointBoundary(piece, HALF)) : piece.slice(codePointBoundary(piece, piece.length - HALF));
}
