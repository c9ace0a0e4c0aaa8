/**
 * Incremental `until_pattern` matching over a job's rendered output (the text the model sees), fed
 * chunk by chunk as it arrives. Owns the line rules: where lines start and end, when a line is tested,
 * which text the first match consumes, and the skipping of a PTY's echo. Keeps only the unfinished
 * line, bounded. Pure: no job, no clock.
 *
 * Interface (one watch per call that has `until_pattern`):
 * - `new LineWatch(pattern, { partialLine })`: `partialLine` is the text of the line the first fed
 *   text continues (everything after the last `\n` rendered before it), or "" at a line start. It is
 *   context only: that text is never tested on its own, only with what this watch is fed after it.
 * - `ignoreEcho(written)`: the call just wrote `written` to the PTY; the terminal's echo of it,
 *   where it comes next, is never matched. Call it after feeding the output that preceded the write.
 * - `feed(text)`: appends the next rendered text, in order. The caller feeds first the output that was
 *   buffered but not returned when the call began, then each chunk as it arrives. Returns the first
 *   match once, undefined otherwise (and after the match: it reads nothing more).
 * - `match`: the first match, once there is one.
 *
 * Rules: every line that gets new text from this watch is tested once it is complete (at its `\n`,
 * a trailing `\r` dropped; a line break of the job's own counts as new text, so a blank line is
 * tested), and the unfinished last line is tested at the end of every feed that
 * gave it new text (so `Password: ` matches without a line break, and a line split across feeds is
 * tested again as it grows). Echo characters are not part of the tested line, but an echoed line
 * break still ends it, so the echo of `echo ready\r` is an empty line that is never tested, while the
 * command's own `ready` is. The match reports where in the fed text the matched line ends (its `\n`
 * included when complete); the caller returns the output up to there and keeps the rest unread.
 * Matching work is paid from a {@link PatternBudget}: a pattern that costs the job's output more than
 * its share matches nothing more (`onSuspend`, once); the wait goes on to its other ends.
 */
import { LINE_TEST_CHARS } from "../shared/constants.ts";
import { PatternBudget } from "./pattern-budget.ts";
import { EchoFilter } from "./pty-echo.ts";
import type { LinePattern } from "./until-pattern.ts";

export interface LineMatch {
  /** The matched line as tested (echo left out), cut to `MATCHED_LINE_CHARS` around the match: `matched_line`. */
  line: string;
  /** True when the line had ended (`\n`) when it matched; false for an unfinished line (a prompt). */
  complete: boolean;
  /** Index in the text of the `feed` call that returned this match, just after the matched line. */
  end: number;
  /** The same position counted in all text fed to this watch, from its first character. */
  offset: number;
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
  if (head) {
    const code = piece.charCodeAt(HALF);
    return piece.slice(0, code >= 0xdc00 && code <= 0xdfff ? HALF - 1 : HALF);
  }
  const from = piece.length - HALF;
  const code = piece.charCodeAt(from);
  return piece.slice(code >= 0xdc00 && code <= 0xdfff ? from - 1 : from);
}

export class LineWatch {
  private readonly line = new BoundedLine();
  /** The current line got text from this watch since it was last tested. */
  private grown = false;
  private readonly echo = new EchoFilter();
  private fed = 0;
  private found: LineMatch | undefined;
  private readonly budget: PatternBudget;

  constructor(
    private readonly pattern: LinePattern,
    options: { partialLine?: string; now?: () => number; cpuMs?: () => number; onSuspend?: () => void } = {},
  ) {
    if (options.partialLine) this.line.append(options.partialLine);
    this.budget = new PatternBudget(options.now ?? (() => performance.now()), () => options.onSuspend?.(), options.cpuMs);
  }

  get match(): LineMatch | undefined {
    return this.found;
  }

  /** The call wrote `written` to the terminal: the echo of it that comes next is never matched. */
  ignoreEcho(written: string): void {
    this.echo.expect(written);
  }

  /** Appends the next rendered text; returns the first match (once) when this text completes one. */
  feed(text: string): LineMatch | undefined {
    return this.feedAfterEcho(text, this.echo.take(text));
  }

  /**
   * As {@link feed}, for a caller that tracks the echo itself: the first `echoChars` characters of
   * `text` are echo (see `EchoFilter.take`). Do not mix with {@link ignoreEcho}. `redrawn`: `text`
   * starts with the unfinished line redrawn whole, which replaces what the line had.
   */
  feedAfterEcho(text: string, echoChars: number, redrawn = false): LineMatch | undefined {
    if (this.found || this.budget.spent) return undefined;
    if (redrawn) this.line.clear();
    const base = this.fed;
    this.fed += text.length;
    let start = 0;
    while (start < text.length) {
      const lf = text.indexOf("\n", start);
      const end = lf === -1 ? text.length : lf;
      // The echo is a prefix of the text: only the part of [start, end) after it is the job's own.
      const own = Math.max(start, Math.min(echoChars, end));
      if (own < end) {
        this.line.append(lf !== -1 && end > own && text.charCodeAt(end - 1) === 0x0d ? text.slice(own, end - 1) : text.slice(own, end));
        this.grown = true;
      }
      if (lf === -1) break;
      // A line break of the job's own completes a line it printed (a blank one too); an echoed one does not.
      if (lf >= echoChars) this.grown = true;
      if (this.grown && this.test(true, lf + 1, base)) return this.found;
      this.line.clear();
      this.grown = false;
      start = lf + 1;
    }
    if (this.grown && !this.line.empty && this.test(false, text.length, base)) return this.found;
    this.grown = false;
    return undefined;
  }

  private test(complete: boolean, end: number, base: number): boolean {
    this.grown = false;
    if (!this.line.parts().some((part) => this.budget.test(this.pattern, part))) return false;
    this.found = { line: this.pattern.excerpt(this.line.text()), complete, end, offset: base + end };
    return true;
  }
}
