/**
 * What a job printed for one read, counted on the raw bytes as they arrive: bytes, lines and
 * failure-looking lines, including the bytes retention later drops. The truncation footer reports
 * these counts, so a flood of 2 000 000 lines reads "of 2000000 lines" even though only a megabyte was
 * kept between reads; an exit notice says what is unread and where it looks like a failure.
 */
import { FailureLines } from "./failure-lines.ts";

/** Bytes and lines a job printed for one read. */
export interface PrintedCount {
  bytes: number;
  /** Lines as Pi's `truncateTail` counts them: each newline ends one, an unfinished last line counts too. */
  lines: number;
}

const LF = 0x0a;

/** Newlines in `bytes[start, end)`; native `indexOf`, so long lines cost next to nothing. */
export function newlinesIn(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let at = view.indexOf(LF, start); at !== -1 && at < end; at = view.indexOf(LF, at + 1)) count++;
  return count;
}

/** A running count of bytes and newlines, and whether the last byte ended a line. */
export class PrintedTally {
  bytes = 0;
  newlines = 0;
  /** The last byte counted ended a line (or nothing was counted). */
  endsLine = true;
  /** Its failure-looking lines; `first` is a line index within this tally. */
  failures = new FailureLines();

  add(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.failures.add(chunk, this.newlines);
    this.bytes += chunk.length;
    this.newlines += newlinesIn(chunk);
    this.endsLine = chunk[chunk.length - 1] === LF;
  }

  /** Adds what `later` counted after this tally's bytes. */
  merge(later: PrintedTally): void {
    if (later.bytes === 0) return;
    if (this.failures.first === -1 && later.failures.first !== -1) this.failures.first = this.newlines + later.failures.first;
    this.failures.count += later.failures.count;
    this.bytes += later.bytes;
    this.newlines += later.newlines;
    this.endsLine = later.endsLine;
  }

  /**
   * Moves the last `bytes` bytes (holding `newlines` newlines and `failures`) into a new tally, which
   * keeps this one's line ending and its place in a line; `endsLine` says whether what stays here now ends a line.
   */
  splitOff(bytes: number, newlines: number, endsLine: boolean, failures: { count: number; first: number }): PrintedTally {
    const moved = new PrintedTally();
    moved.bytes = Math.min(bytes, this.bytes);
    moved.newlines = Math.min(newlines, this.newlines);
    moved.endsLine = this.endsLine;
    this.bytes -= moved.bytes;
    this.newlines -= moved.newlines;
    this.endsLine = endsLine;
    // The counting goes on in the moved part (what arrives next follows it); what stays keeps the rest.
    const kept = new FailureLines();
    kept.count = Math.max(0, this.failures.count - failures.count);
    kept.first = this.failures.first < this.newlines ? this.failures.first : -1;
    moved.failures = this.failures;
    moved.failures.count = failures.count;
    moved.failures.first = failures.first;
    this.failures = kept;
    return moved;
  }

  count(): PrintedCount {
    return { bytes: this.bytes, lines: this.newlines + (this.bytes > 0 && !this.endsLine ? 1 : 0) };
  }
}
