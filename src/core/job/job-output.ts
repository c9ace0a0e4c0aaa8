import { failuresIn } from "../output/failure-lines.ts";
import { HeadTailBuffer, type RetainedOutput } from "../output/head-tail-buffer.ts";
import { continuationPrefix, type Elision, OutputDecoder } from "../output/output-decoder.ts";
import { newlinesIn, type PrintedCount, PrintedTally } from "../output/printed-tally.ts";
import type { LinePattern } from "../patterns/line-pattern.ts";
import type { PatternBudget } from "../patterns/pattern-budget.ts";
import { PROMPT_LINE_CHARS } from "../shared/constants.ts";
import type { CallWait } from "../wait/call-wait.ts";
import type { UnreadOutput } from "../wake-watch/pattern-watch.ts";
import { ReadMatches, type ReadMatchList } from "../wake-watch/read-matches.ts";

/** The latest output kept per job for the UI's live preview, apart from what the model reads. */
const PREVIEW_BYTES = 32 * 1024;

/** Output of one read: model text since the previous read, and the bytes retention dropped. */
export interface OutputDelta {
  text: string;
  omittedBytes: number;
  /** What the job printed for this read, dropped bytes included (absent where nothing was read). */
  printed?: PrintedCount;
  /** A large read decoded at its ends: the middle no result shows (see output-decoder.ts). */
  elided?: Elision;
  /** The lines of this read the job's `wake_on_pattern` matches (absent when none or no pattern). */
  matched?: ReadMatchList;
}

/** What the job printed after the last read, as metadata only: how much, the log lines it spans (1-based), the failure-looking lines. */
export interface UnreadTally {
  lines: number;
  bytes: number;
  fromLine: number;
  toLine: number;
  failures: number;
  /** The first failure-looking line's number in the log. */
  firstFailureLine?: number;
}

/**
 * What a job printed, as reads need it: the bytes retained since the previous read (head and tail),
 * the streaming decoder, a separate tail for the UI's preview (watching never drains what the model
 * reads), and the counters every report carries.
 */
export class JobOutput {
  private readonly retained = new HeadTailBuffer();
  private readonly decoder = new OutputDecoder();
  private readonly preview = new HeadTailBuffer(PREVIEW_BYTES, 0);
  private total = 0;
  /** The stream position (in bytes since spawn) the last read ended at. */
  private readTotal = 0;
  private lastChunkMono: number | undefined;
  /** A conditional wait watching what arrives, while a call has one. */
  private watch: CallWait | undefined;
  /** Bytes that arrived after a matched line: the next read's, kept out of this one. */
  private deferred: Buffer[] | undefined;
  /** The unfinished last line of the text returned so far (what a prompt looks like). */
  private returnedLastLine = "";
  /** Raw bytes and lines for the next read, and for the deferred bytes after it. */
  private pending = new PrintedTally();
  private deferredTally: PrintedTally | undefined;
  private readCount = 0;
  /** The newlines of what reads took: the unread output starts on the line after them. */
  private linesRead = 0;
  /** The last read ended at a line start (or nothing was read yet). */
  private readEndsLine = true;
  /** The job's `wake_on_pattern`, tested on every line a read returns (see read-matches.ts). */
  private matches: ReadMatches | undefined;

  constructor(private readonly startedMono: number) {}

  /** Every byte since spawn, including bytes retention dropped. */
  get bytesTotal(): number {
    return this.total;
  }

  /** Reads taken so far: a job's first result is the one after its first read. */
  get reads(): number {
    return this.readCount;
  }

  /** Bytes of the stream up to where the last read ended: a call previews what came after it. */
  get bytesRead(): number {
    return this.readTotal;
  }

  push(chunk: Buffer, nowMono: number = performance.now()): void {
    this.total += chunk.length;
    this.lastChunkMono = nowMono;
    this.preview.push(chunk);
    if (this.deferred) {
      this.deferred.push(Buffer.from(chunk)); // a pipe reuses its read buffer: keep a copy
      this.deferredTally?.add(chunk);
      return;
    }
    const cut = this.watch?.feed(chunk, nowMono);
    if (cut === undefined || cut >= chunk.length) {
      this.retained.push(chunk);
      this.matches?.feed(chunk, this.pending.newlines);
      this.pending.add(chunk);
      return;
    }
    this.retained.push(chunk.subarray(0, cut));
    this.matches?.feed(chunk.subarray(0, cut), this.pending.newlines);
    this.pending.add(chunk.subarray(0, cut));
    this.deferred = [Buffer.from(chunk.subarray(cut))];
    this.deferredTally = new PrintedTally();
    this.deferredTally.add(chunk.subarray(cut));
  }

  /**
   * A call starts a conditional wait: `watch` sees the output not yet returned first, then every
   * chunk. When a line matches, what follows it stays out of this call's read.
   */
  startWatch(watch: CallWait, nowMono: number = performance.now()): void {
    this.watch = watch;
    const retained = this.retained.snapshot();
    const cut = watch.begin(retained, this.lastChunkMono, nowMono);
    // What was retained past the match goes after this call's read (what arrives later, the watch cuts).
    if (cut !== undefined && cut < retained.head.length + retained.tail.length) {
      this.deferred = this.retained.cutAfter(cut);
      this.deferredTally = this.tallyAfter(retained, cut);
    }
  }

  /**
   * Moves the count of what follows offset `cut` of the retained bytes (the dropped middle too, when it
   * follows) to its own tally. A dropped middle's failure-looking lines are counted, not placed.
   */
  private tallyAfter({ head, tail, omittedBytes }: RetainedOutput, cut: number): PrintedTally {
    const tailNewlines = newlinesIn(tail);
    if (cut > head.length) {
      const inTail = cut - head.length;
      const after = tail.subarray(inTail);
      return this.pending.splitOff(after.length, newlinesIn(after), tail[inTail - 1] === 0x0a, failuresIn(after));
    }
    // The dropped middle's newlines are what the tally counted beyond the retained bytes'.
    const omittedNewlines = Math.max(0, this.pending.newlines - newlinesIn(head) - tailNewlines);
    const bytes = head.length - cut + omittedBytes + tail.length;
    const after = head.subarray(cut);
    const count = Math.max(0, this.pending.failures.count - failuresIn(head.subarray(0, cut)).count);
    const failures = { count, first: failuresIn(after, ...(omittedBytes === 0 ? [tail] : [])).first };
    return this.pending.splitOff(bytes, newlinesIn(after) + omittedNewlines + tailNewlines, cut === 0 || head[cut - 1] === 0x0a, failures);
  }

  /**
   * Tests every line a read returns against `pattern` from now on (undefined: no more), paid from
   * `budget` when given. Returns what the wake's watch of the same pattern shares with it.
   */
  watchReads(pattern: LinePattern | undefined, budget?: PatternBudget): void {
    this.matches = pattern && new ReadMatches(pattern, budget);
  }

  /** What the job printed after the last read, counted as it arrived (an exit notice and a listing say it). */
  get unreadTally(): UnreadTally {
    const { bytes, lines } = this.pending.count();
    const { count, first } = this.pending.failures;
    return {
      lines,
      bytes,
      fromLine: this.linesRead + 1,
      toLine: this.linesRead + lines,
      failures: count,
      ...(first !== -1 ? { firstFailureLine: this.linesRead + first + 1 } : {}),
    };
  }

  /** The unfinished last line of what the model has been given, for the prompt signal of `input_wait`. */
  get lastLine(): string {
    return this.returnedLastLine;
  }

  /** Milliseconds since the last byte (since spawn when there was none). */
  quietMs(nowMono: number = performance.now()): number {
    return Math.max(0, Math.round(nowMono - (this.lastChunkMono ?? this.startedMono)));
  }

  /** Model text of what was retained since the previous read; `final` once nothing more will follow. */
  take(final: boolean): OutputDelta {
    const retained = this.retained.drain();
    const last = retained.tail.length > 0 ? retained.tail : retained.head;
    if (last.length > 0) this.readEndsLine = last[last.length - 1] === 0x0a;
    const { text, elided, redrewLine } = this.decoder.take(retained, final);
    // An end decoded from a line start on: the line the model was last given has ended; a redrawn one shows anew.
    if (elided || redrewLine) this.returnedLastLine = "";
    this.remember(text);
    this.readCount++;
    const printed = this.pending.count();
    this.linesRead += this.pending.newlines;
    this.pending = this.deferredTally ?? new PrintedTally();
    this.deferredTally = undefined;
    // A matched line ended this read: the output after it is the next read's, in order.
    this.watch?.stop();
    this.watch = undefined;
    const deferred = this.deferred;
    this.deferred = undefined;
    if (deferred) for (const chunk of deferred) this.retained.push(chunk);
    this.readTotal = this.total - (deferred ?? []).reduce((sum, chunk) => sum + chunk.length, 0);
    const matched = this.matches?.take();
    return { text, omittedBytes: retained.omittedBytes, printed, ...(elided ? { elided } : {}), ...(matched ? { matched } : {}) };
  }

  /**
   * What the job printed after the last read, unread: a holder letting go hands it to the pattern
   * watch. Where retention dropped a middle, only what follows it, from its first line start.
   */
  unread(): UnreadOutput {
    const { head, tail, omittedBytes } = this.retained.snapshot();
    if (omittedBytes > 0) return { chunks: [tail], atLineStart: false, end: this.total };
    return { chunks: [head, tail], atLineStart: this.readEndsLine, end: this.total };
  }

  /** The watch ends without a read (a cancelled call): output after a match stays unread, in order. */
  stopWatch(): void {
    this.watch?.stop();
    this.watch = undefined;
    const deferred = this.deferred;
    this.deferred = undefined;
    if (deferred) for (const chunk of deferred) this.retained.push(chunk);
    if (this.deferredTally) this.pending.merge(this.deferredTally);
    this.deferredTally = undefined;
  }

  private remember(text: string): void {
    const lf = text.lastIndexOf("\n");
    this.returnedLastLine = lf === -1 ? this.returnedLastLine + text : text.slice(lf + 1);
    if (this.returnedLastLine.length > PROMPT_LINE_CHARS) this.returnedLastLine = this.returnedLastLine.slice(-PROMPT_LINE_CHARS);
  }

  /**
   * The latest output for a live preview: at most the last {@link PREVIEW_BYTES}, and only what
   * arrived after byte `sinceTotal` of the stream (so a call previews its own output). Terminal
   * controls are stripped; it drains nothing.
   */
  previewText(sinceTotal = 0): string {
    const want = Math.min(PREVIEW_BYTES, this.total - sinceTotal);
    if (want <= 0) return "";
    const { tail } = this.preview.snapshot();
    const bytes = tail.subarray(Math.max(0, tail.length - want));
    return new OutputDecoder().take({ head: Buffer.alloc(0), tail: bytes.subarray(continuationPrefix(bytes)), omittedBytes: 0 }, true).text;
  }
}
