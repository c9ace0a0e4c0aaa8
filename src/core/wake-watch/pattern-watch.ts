/*
 * wake-watch/ — `wake_on_pattern` on a job's lines: the watch whose hits become wakes (this file), and
 * the matching lines of each read, which a result names where its cut left them out (read-matches.ts).
 * The flow at a glance:
 * 1. `Job.watchLines` arms both with one budget for the pattern on this job (patterns/).
 * 2. Every chunk goes to the reads' matcher; while neither a call nor the user holds the job, to the
 *    watch too (job-holders.ts).
 * 3. Both test lines through the pattern's tester; a hit goes to the completion ledger
 *    (job-wakes.ts), a read's matches go with its result (`pattern_matched_unshown`).
 *
 * May import: shared, patterns.
 */

import type { LinePattern } from "../patterns/line-pattern.ts";
import { LineTester } from "../patterns/line-tester.ts";
import { PatternBudget } from "../patterns/pattern-budget.ts";
import { type Clock, realClock } from "../shared/clock.ts";
import { PATTERN_WAKE_LINE_CHARS } from "../shared/constants.ts";

/** The unfinished last line is tested once the job printed nothing this long: a prompt has no line break, a line still being written must not be judged by its start. */
const PATTERN_WAKE_QUIET_MS = 1_000;

/** What a watch reports: the first line that matched in one piece of output, and how many did. */
export interface PatternHit {
  /** The first matching line as the model would read it (rendered), at most {@link PATTERN_WAKE_LINE_CHARS} around the match. */
  line: string;
  /** Matching lines in this piece of output, the first included. */
  count: number;
  /** Where that piece of output ends: a byte offset of the job's stream (every line counted ends there or before). */
  end: number;
}

export interface PatternWatchOptions {
  /** The stream is in the middle of a line when the watch starts: that line is not tested. */
  midLine: boolean;
  onHit: (hit: PatternHit) => void;
  clock?: Clock;
  /** Pass over plain chunks that cannot match (default); false tests every chunk in full (tests compare the two). */
  prefilter?: boolean;
  /** The stream offset of the first byte the watch will be fed (the job's output total when it starts). */
  startAt?: number;
  /** Lines ending at or before this stream offset were judged already (announced by a wake): never tested again. */
  judgedThrough?: () => number;
  /** The pattern cost this job's output more than its share (pattern-budget.ts): the watch stopped for good. */
  onSuspend?: () => void;
  /** The process's CPU time in ms (pattern-budget.ts; tests give a clock of their own). */
  cpuMs?: () => number;
  /** A budget shared with the job's other testers of this pattern (read-matches.ts); default: one of its own. */
  budget?: PatternBudget;
}

/**
 * `wake_on_pattern` on one job: each line of its output tested as the model would read it (a line
 * redrawn across reads as it finally shows), reported, never kept. Pure of jobs and wakes. Rules:
 * - A complete line is tested once, at its line break; the unfinished last line after
 *   {@link PATTERN_WAKE_QUIET_MS} of silence (a prompt), and again only if it changed meanwhile.
 * - Only lines printed after the watch started count. While a call or the user holds the job
 *   (`suspend(true)`) nothing is tested; what a call left unread is tested from its next line start
 *   on (`resume`). A line ending at or before `judgedThrough` (a wake announced it) is never tested again.
 * - What the job prints in the `TYPING_REPLY_MS` after the user typed is their reply's: not tested
 *   (`ignoreFor`). That no wake quotes a typed secret does not rest on it (job-holders.ts).
 * - A pattern that costs this job's output more than its share stops the watch (`onSuspend`, once).
 */
export class PatternWatch {
  private readonly tester: LineTester;
  /** The unfinished line changed since it was last tested. */
  private lineGrown = false;
  /** The unfinished line as its last test saw it, when that was at a silence. */
  private judged: string | undefined;
  /** Output before this time is the reply to the user's typing: not tested. */
  private ignoreUntil: number | undefined;
  /** Skip everything up to the next line break (a line the watch may not judge). */
  private skipLine: boolean;
  private suspended = false;
  /** The last byte seen was a line break (or nothing was seen): where a resumed watch stands. */
  private atLineStart: boolean;
  private lastOutput = 0;
  /** The stream offset just past the last byte fed. */
  private position: number;
  private readonly startAt: number;
  private timer: unknown;
  private stopped = false;
  private readonly clock: Clock;

  constructor(
    pattern: LinePattern,
    private readonly options: PatternWatchOptions,
  ) {
    this.skipLine = options.midLine;
    this.atLineStart = !options.midLine;
    this.clock = options.clock ?? realClock;
    this.startAt = options.startAt ?? 0;
    this.position = this.startAt;
    const budget = options.budget ?? new PatternBudget(() => this.clock.now(), undefined, options.cpuMs);
    this.tester = new LineTester(pattern, budget, options);
    budget.whenSpent(() => {
      this.stop();
      this.options.onSuspend?.();
    });
  }

  /** Someone holds the job (`true`: a call, the user), or nobody does any more (`false`). */
  suspend(held: boolean): void {
    this.resume(held ? undefined : { chunks: [], atLineStart: this.atLineStart });
  }

  /**
   * Nobody holds the job any more (`unread` given), or someone does (undefined). `unread` is what
   * the job printed after the holder's last read, which is tested from the first line start on.
   */
  resume(unread: UnreadOutput | undefined, now: number = this.clock.now()): void {
    const held = unread === undefined;
    if (held === this.suspended) return;
    this.suspended = held;
    if (held) {
      this.clearLine();
      this.cancelTimer();
      return;
    }
    // A fresh renderer at the next line start; a line the holder read in part is not judged.
    this.tester.restart();
    this.skipLine = !unread.atLineStart;
    if (unread.end !== undefined) this.position = unread.end - unread.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    for (const chunk of unread.chunks) this.feed(chunk, now);
  }

  /** What the job prints for the next `ms` is not tested (the reply to the user's typing). */
  ignoreFor(ms: number, now: number = this.clock.now()): void {
    this.ignoreUntil = Math.max(this.ignoreUntil ?? 0, now + ms);
  }

  /** The job printed `chunk` (in order, every byte once). */
  feed(chunk: Uint8Array, now: number = this.clock.now()): void {
    if (this.stopped || chunk.length === 0) return;
    this.position += chunk.length;
    const wasAtLineStart = this.atLineStart;
    this.atLineStart = chunk[chunk.length - 1] === 0x0a;
    if (this.suspended) return;
    if (this.ignoreUntil !== undefined) {
      if (now < this.ignoreUntil) {
        this.clearLine();
        this.skipLine = true;
        return;
      }
      this.ignoreUntil = undefined;
      if (wasAtLineStart) this.skipLine = false;
    }
    this.lastOutput = now;
    let bytes = chunk;
    if (this.skipLine) {
      const lf = bytes.indexOf(0x0a);
      if (lf === -1) return;
      this.skipLine = false;
      this.clearLine();
      this.tester.restart();
      bytes = bytes.subarray(lf + 1);
      if (bytes.length === 0) return;
    }
    // Output a wake announced already (a resumed watch is fed it again) is rendered, never tested.
    const through = Math.max(this.startAt, this.options.judgedThrough?.() ?? 0);
    const judged = Math.min(bytes.length, Math.max(0, through - (this.position - bytes.length)));
    if (judged > 0) {
      this.scan(bytes.subarray(0, judged), false);
      // A line announced at a silence and still unfinished is judged as it stands.
      if (bytes[judged - 1] !== 0x0a) this.judged = this.tester.unfinished();
    }
    if (judged < bytes.length) this.scan(bytes.subarray(judged));
    // Anything after the last line break changes the unfinished line (text, a redraw, an erase).
    this.lineGrown = bytes[bytes.length - 1] !== 0x0a;
    if (this.lineGrown) this.armTimer();
  }

  /**
   * The pattern disarmed, or the job is over (`exited`): nothing more is tested. At the exit, the
   * unfinished last line is as final as a line ever gets: it is tested as after a silence.
   */
  stop(exited = false): void {
    if (exited && !this.stopped && this.timer !== undefined) {
      this.cancelTimer();
      this.quietCheck(true);
    }
    this.stopped = true;
    this.cancelTimer();
    this.clearLine();
  }

  /** Tests every line `bytes` complete (`test` false: passes them over); keeps their unfinished end. */
  private scan(bytes: Uint8Array, test = true): void {
    let first: string | undefined;
    let count = 0;
    this.tester.lines(bytes, (line) => {
      const judged = this.judged;
      this.clearLine();
      if (!test || line === judged || !this.tester.test(line)) return;
      count++;
      first ??= this.tester.excerpt(line, PATTERN_WAKE_LINE_CHARS);
    });
    if (first !== undefined) this.options.onHit({ line: first, count, end: this.position });
  }

  private clearLine(): void {
    this.lineGrown = false;
    this.judged = undefined;
  }

  /** One timer at a time, moved on lazily: a flood does not re-arm it per chunk. */
  private armTimer(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = this.clock.setTimeout(() => this.quietCheck(), PATTERN_WAKE_QUIET_MS);
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The unfinished line after {@link PATTERN_WAKE_QUIET_MS} of silence (or the exit): tested once, as a prompt. */
  private quietCheck(exited = false): void {
    this.timer = undefined;
    if (this.stopped || this.suspended || !this.lineGrown) return;
    const waited = this.clock.now() - this.lastOutput;
    if (waited < PATTERN_WAKE_QUIET_MS && !exited) {
      this.timer = this.clock.setTimeout(() => this.quietCheck(), PATTERN_WAKE_QUIET_MS - waited);
      return;
    }
    this.lineGrown = false;
    const text = this.tester.unfinished();
    if (text === this.judged) return;
    this.judged = text;
    if (this.tester.test(text))
      this.options.onHit({ line: this.tester.excerpt(text, PATTERN_WAKE_LINE_CHARS), count: 1, end: this.position });
  }
}

/** What a holder left unread: the bytes, and whether the holder's read ended at a line start. */
export interface UnreadOutput {
  chunks: readonly Uint8Array[];
  atLineStart: boolean;
  /** The stream offset where the chunks end (the job's output total); absent: they follow what was fed. */
  end?: number;
}
