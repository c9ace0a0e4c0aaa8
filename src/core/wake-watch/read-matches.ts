import type { LinePattern } from "../patterns/line-pattern.ts";
import { LineTester } from "../patterns/line-tester.ts";
import type { PatternBudget } from "../patterns/pattern-budget.ts";
import { PATTERN_WAKE_LINE_CHARS } from "../shared/constants.ts";

/** Matching lines a read numbers (the cap shows 2 000 lines); more are counted, not numbered. */
const READ_MATCHES_KEPT = 4096;

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
 * header instead of losing them (`pattern_matched_unshown`). The read's own tally numbers the lines.
 */
export class ReadMatches {
  private readonly tester: LineTester;
  private found: number[] = [];
  private first: string | undefined;
  private more = 0;

  /**
   * `budget`: the job's budget for this pattern (pattern-budget.ts), shared with its wake's watch; none:
   * tests run unpaid.
   */
  constructor(pattern: LinePattern, budget?: PatternBudget) {
    this.tester = new LineTester(pattern, budget);
  }

  /**
   * The job printed `chunk`, which the current read will return; `lines`: the complete lines of the
   * read before it (the read's tally counts them anyway, so a flood is not counted twice).
   */
  feed(chunk: Uint8Array, lines: number): void {
    if (this.tester.spent) return; // suspended: what this read matched before stays named
    let number = lines;
    // Lines passed over cannot match, and none follows them in this chunk: the count stays right.
    this.tester.lines(chunk, (line) => this.judge(line, number++));
  }

  /** The read ends: what it matched (undefined: nothing), and the next read starts at line 0. */
  take(): ReadMatchList | undefined {
    const list = this.first === undefined ? undefined : { lines: this.found, first: this.first, more: this.more };
    this.found = [];
    this.first = undefined;
    this.more = 0;
    return list;
  }

  /** Line `number` of the read, as the model reads it. */
  private judge(text: string, number: number): void {
    if (!this.tester.test(text)) return;
    this.first ??= this.tester.excerpt(text, PATTERN_WAKE_LINE_CHARS);
    if (this.found.length < READ_MATCHES_KEPT) this.found.push(number);
    else this.more++;
  }
}
