/**
 * Which lines of a job's output look like failures, counted on the raw bytes as they arrive (never a
 * re-read of the log), so an exit notice can say where to look without quoting a byte. A line looks
 * like a failure when it holds, in any case, `error`, `fail`, `panic`, `traceback`, `exception` or
 * `fatal`, other than as a zero count (`0 failed`, `failures: 0`, `# fail 0`, `no errors`).
 */

/** The words: one case-insensitive search per chunk (its cost on a 200 MB flood is in docs/benchmarks.md). */
const FAILURE_WORD = /error|fail|panic|traceback|exception|fatal/gi;
/** Before the word, on its line: a zero or a `no` (`0 failed`, `no errors`). */
const ZERO_BEFORE = /(?:^|[^\w.])(?:0|no|zero)\s*$/i;
/** After the word, on its line: a zero count (`failures: 0`, `errors=0`, `fail 0`). */
const ZERO_AFTER = /^\w*\)?\s*[:=]?\s*0(?![\d.])/;
/** How much of the line on each side of a word decides whether it is a zero count; also the end of an unfinished line carried to the next chunk. */
const CONTEXT_CHARS = 16;

/** Whether the word at `[at, end)` of `text` counts: not a zero count on its line. */
function counts(text: string, at: number, end: number): boolean {
  const lineStart = Math.max(text.lastIndexOf("\n", at - 1) + 1, at - CONTEXT_CHARS);
  const lineEnd = text.indexOf("\n", end);
  const after = text.slice(end, Math.min(lineEnd === -1 ? text.length : lineEnd, end + CONTEXT_CHARS));
  return !ZERO_BEFORE.test(text.slice(lineStart, at)) && !ZERO_AFTER.test(after);
}

/**
 * Failure-looking lines as chunks arrive: how many, and the first one's index (the newlines before
 * it; -1 when none). A line counts once however many words it holds; a line split across chunks is
 * judged near the split on the carried end of its first part.
 */
export class FailureLines {
  count = 0;
  first = -1;
  /** The end of the unfinished line so far, and whether that line was counted already. */
  private carry = "";
  private lineCounted = false;

  /** Counts `chunk`; `newlines`: the newlines of the output before it. */
  add(chunk: Uint8Array, newlines: number): void {
    if (chunk.length === 0) return;
    const view = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const text = view.toString("latin1");
    const firstNewline = text.indexOf("\n");
    const firstLineEnd = firstNewline === -1 ? text.length : firstNewline;
    // Words before `countedTo` are on a line counted already.
    let countedTo = this.lineCounted ? firstLineEnd : 0;
    if (countedTo === 0 && this.carry && this.splitWordCounts(text)) {
      this.count++;
      if (this.first === -1) this.first = newlines;
      countedTo = firstLineEnd;
    }
    FAILURE_WORD.lastIndex = countedTo;
    for (let match = FAILURE_WORD.exec(text); match; match = FAILURE_WORD.exec(text)) {
      if (!this.judged(text, match.index, match.index + match[0].length, firstLineEnd)) continue;
      this.count++;
      if (this.first === -1) this.first = newlines + newlinesIn(text, match.index);
      const lineEnd = text.indexOf("\n", match.index);
      countedTo = lineEnd === -1 ? text.length : lineEnd;
      FAILURE_WORD.lastIndex = countedTo;
      if (lineEnd === -1) break;
    }
    this.lineCounted = countedTo === text.length;
    const lastNewline = text.lastIndexOf("\n");
    this.carry = (lastNewline === -1 ? this.carry + text : text.slice(lastNewline + 1)).slice(-CONTEXT_CHARS);
  }

  /** A word at `[at, end)`: on the chunk's first line its context starts in the carried part of the line. */
  private judged(text: string, at: number, end: number, firstLineEnd: number): boolean {
    if (at >= firstLineEnd || !this.carry) return counts(text, at, end);
    const joined = this.carry + text.slice(0, Math.min(firstLineEnd, end + CONTEXT_CHARS));
    return counts(joined, this.carry.length + at, this.carry.length + end);
  }

  /** A word split by the chunk's start, its first letters at the end of the carried line. */
  private splitWordCounts(text: string): boolean {
    const joined = this.carry + text.slice(0, CONTEXT_CHARS);
    for (const match of joined.matchAll(FAILURE_WORD)) {
      const end = match.index + match[0].length;
      if (match.index < this.carry.length && end > this.carry.length) return counts(joined, match.index, end);
    }
    return false;
  }
}

/** Newlines in `text` before `end`. */
function newlinesIn(text: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1 && at < end; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/** The failure-looking lines of `parts`, read in order as one stretch of output. */
export function failuresIn(...parts: Uint8Array[]): { count: number; first: number } {
  const lines = new FailureLines();
  let newlines = 0;
  for (const part of parts) {
    lines.add(part, newlines);
    for (let at = part.indexOf(0x0a); at !== -1; at = part.indexOf(0x0a, at + 1)) newlines++;
  }
  return { count: lines.count, first: lines.first };
}
