/** One line's text kept bounded while it is unfinished, as a pattern's test will look at it. */
import { LINE_TEST_CHARS } from "../shared/constants.ts";

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
