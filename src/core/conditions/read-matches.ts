import { renderTerminalText } from "../output/terminal-text.ts";
import { PATTERN_WAKE_LINE_CHARS, READ_MATCH_LINE_BYTES, READ_MATCHES_KEPT } from "../shared/constants.ts";
import type { PatternBudget } from "./pattern-budget.ts";
import { type ChunkLook, mayHoldMatch, plainChunk, type RequiredText, requiredText } from "./required-text.ts";
import type { LinePattern } from "./until-pattern.ts";

/** A control character other than TAB and LF: the text would not render as itself. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/** A plain chunk's text when it renders as itself (printable ASCII, TAB and LF), else undefined. */
function printableText(bytes: Buffer): string | undefined {
  const text = bytes.toString("latin1");
  return CONTROL.test(text) ? undefined : text;
}

/** The lines of one read a job's `wake_on_pattern` matches: each one's number in the read (0: its first line). */
export interface ReadMatchList {
  /** Numbers of the matching lines, in order (at most {@link READ_MATCHES_KEPT}). */
  lines: number[];
  /** The first matching line as the model reads it, cut around the match. */
  first: string;
  /** Matching lines beyond those numbered. */
  more: number;
}

/**
 * Every complete line a job prints, tested against its `wake_on_pattern` whoever holds the job, and
 * numbered within the read that will return it: a result that shows only part of its read (Pi's cap,
 * Codex's head and tail, the retention's dropped middle) names the matching lines it left out in its
 * header instead of losing them (`pattern_matched_unshown`). Chunks that cannot match are passed over
 * (required-text.ts); the read's own tally numbers the lines.
 */
export class ReadMatches {
  private readonly required: RequiredText | undefined;
  /** The start of the unfinished line. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private found: number[] = [];
  private first: string | undefined;
  private more = 0;

  /**
   * `budget`: the job's budget for this pattern (pattern-budget.ts), shared with its wake's watch; none:
   * tests run unpaid. `look`: what is known of the chunk being delivered, shared with the watch too.
   */
  constructor(
    private readonly pattern: LinePattern,
    private readonly budget?: PatternBudget,
    private readonly look?: ChunkLook,
  ) {
    this.required = requiredText(pattern.source);
  }

  /**
   * The job printed `chunk`, which the current read will return; `lines`: the complete lines of the
   * read before it (the read's tally counts them anyway, so a flood is not counted twice).
   */
  feed(chunk: Uint8Array, lines: number): void {
    if (this.budget?.spent) return; // suspended: what this read matched before stays named
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let number = lines;
    let start = 0;
    if (this.partialBytes > 0) {
      const lf = bytes.indexOf(0x0a);
      if (lf === -1) {
        this.keep(bytes);
        return;
      }
      this.line(bytes.subarray(0, lf), number++);
      start = lf + 1;
    }
    const rest = bytes.subarray(start);
    const plain = plainChunk(rest, this.look);
    const skip = this.required && plain && !mayHoldMatch(this.required, rest, () => false, this.look);
    const from = skip ? rest.lastIndexOf(0x0a) + 1 : this.lines(rest, number, plain); // skipped: no line here can match
    this.keep(rest.subarray(from));
  }

  /** Tests the complete lines of `rest`, the first numbered `number`; returns where its unfinished end starts. */
  private lines(rest: Buffer, number: number, plain: boolean): number {
    let from = 0;
    // Printable ASCII renders as itself: decoded once, each line tested as a slice of it.
    const text = plain ? printableText(rest) : undefined;
    if (text !== undefined) {
      for (let lf = text.indexOf("\n"); lf !== -1; lf = text.indexOf("\n", from)) {
        this.judge(text.slice(from, lf), number++);
        from = lf + 1;
      }
      return from;
    }
    for (let lf = rest.indexOf(0x0a); lf !== -1; lf = rest.indexOf(0x0a, from)) {
      this.line(rest.subarray(from, lf), number++);
      from = lf + 1;
    }
    return from;
  }

  /** The read ends: what it matched (undefined: nothing), and the next read starts at line 0. */
  take(): ReadMatchList | undefined {
    const list = this.first === undefined ? undefined : { lines: this.found, first: this.first, more: this.more };
    this.found = [];
    this.first = undefined;
    this.more = 0;
    return list;
  }

  private keep(bytes: Buffer): void {
    const room = READ_MATCH_LINE_BYTES - this.partialBytes;
    if (room <= 0 || bytes.length === 0) return;
    const kept = Buffer.from(bytes.subarray(0, room));
    this.partial.push(kept);
    this.partialBytes += kept.length;
  }

  private line(bytes: Buffer, number: number): void {
    const whole = this.partialBytes > 0 ? Buffer.concat([...this.partial, bytes.subarray(0, READ_MATCH_LINE_BYTES)]) : bytes;
    this.partial = [];
    this.partialBytes = 0;
    this.judge(renderTerminalText(whole.toString("utf8")), number);
  }

  /** Line `number` of the read, as the model reads it. */
  private judge(text: string, number: number): void {
    if (!(this.budget ? this.budget.test(this.pattern, text) : this.pattern.test(text))) return;
    this.first ??= this.pattern.excerpt(text, PATTERN_WAKE_LINE_CHARS);
    if (this.found.length < READ_MATCHES_KEPT) this.found.push(number);
    else this.more++;
  }
}
