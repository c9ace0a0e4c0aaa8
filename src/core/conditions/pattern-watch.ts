import { TerminalText } from "../output/terminal-text.ts";
import { PATTERN_WAKE_QUIET_MS } from "../shared/constants.ts";
import { BoundedLine } from "./line-watch.ts";
import { type QuietClock, realClock } from "./quiet-watch.ts";
import { candidateCodePoints, mayHoldMatch, plainChunk, type RequiredText, requiredText } from "./required-text.ts";
import type { LinePattern } from "./until-pattern.ts";

/** What a watch reports: the first line that matched in one piece of output, and how many did. */
export interface PatternHit {
  /** The first matching line as the model would read it (rendered), cut around the match. */
  line: string;
  /** Matching lines in this piece of output, the first included. */
  count: number;
}

export interface PatternWatchOptions {
  /** The stream is in the middle of a line when the watch starts: that line is not tested. */
  midLine: boolean;
  onHit: (hit: PatternHit) => void;
  clock?: QuietClock;
  quietMs?: number;
  /** Pass over plain chunks that cannot match (default); false tests every chunk in full (tests compare the two). */
  prefilter?: boolean;
}

/**
 * `wake_on_pattern` on one job: every line of its output, as the model would read it, tested as it
 * arrives; a line that matches is reported, never kept. Pure of jobs and wakes: the job feeds its
 * bytes, the completion ledger decides what a hit becomes.
 *
 * Rules:
 * - A complete line is tested once, at its line break. The unfinished last line is tested once the
 *   job has printed nothing for {@link PATTERN_WAKE_QUIET_MS} (a prompt), and again only if it grows.
 * - Only lines printed after the watch started count: a line it starts in the middle of is skipped.
 * - While a call is attached (`suspend(true)`), nothing is tested: that call returns those lines.
 *   When it lets go in the middle of a line, that line (partly returned) is skipped too.
 * - A flood that cannot match costs `memchr` speed: a chunk that is ASCII without ESC or CR, where a
 *   character every alternative needs is absent (required-text.ts), is passed over without being
 *   rendered, as long as the renderer holds nothing from the previous chunk. Only its unfinished
 *   last line is rendered, to go on with the next chunk.
 */
export class PatternWatch {
  private readonly required: RequiredText | undefined;
  private readonly candidates: number[];
  private utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  private terminal = new TerminalText();
  /** The renderer holds nothing back (no part of a control sequence or of a character). */
  private atRest = true;
  private readonly line = new BoundedLine();
  /** Candidate characters (see required-text.ts) present in the unfinished line. */
  private readonly lineHas = new Set<number>();
  /** The unfinished line got text since it was last tested. */
  private lineGrown = false;
  /** Skip everything up to the next line break (a line the watch may not judge). */
  private skipLine: boolean;
  private suspended = false;
  /** The last byte seen was a line break (or nothing was seen): where a resumed watch stands. */
  private atLineStart: boolean;
  private lastOutput = 0;
  private timer: unknown;
  private stopped = false;
  private readonly clock: QuietClock;
  private readonly quietMs: number;

  constructor(
    readonly pattern: LinePattern,
    private readonly options: PatternWatchOptions,
  ) {
    this.required = options.prefilter === false ? undefined : requiredText(pattern.source);
    this.candidates = this.required ? candidateCodePoints(this.required) : [];
    this.skipLine = options.midLine;
    this.atLineStart = !options.midLine;
    this.clock = options.clock ?? realClock;
    this.quietMs = options.quietMs ?? PATTERN_WAKE_QUIET_MS;
  }

  /** A call attaches (`true`) or lets go (`false`). */
  suspend(attached: boolean): void {
    if (attached === this.suspended) return;
    this.suspended = attached;
    if (attached) {
      this.clearLine();
      this.cancelTimer();
      return;
    }
    // Resumed: a fresh renderer at the next line start; a line the call returned in part is not judged.
    this.utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
    this.terminal = new TerminalText();
    this.atRest = true;
    this.skipLine = !this.atLineStart;
  }

  /** The job printed `chunk` (in order, every byte once). */
  feed(chunk: Uint8Array, now: number = this.clock.now()): void {
    if (this.stopped || chunk.length === 0) return;
    this.atLineStart = chunk[chunk.length - 1] === 0x0a;
    if (this.suspended) return;
    this.lastOutput = now;
    let bytes = chunk;
    if (this.skipLine) {
      const lf = bytes.indexOf(0x0a);
      if (lf === -1) return;
      this.skipLine = false;
      bytes = bytes.subarray(lf + 1);
      if (bytes.length === 0) return;
    }
    if (this.passesOver(bytes)) return;
    this.scan(this.render(bytes));
    if (this.lineGrown) this.armTimer();
  }

  /** The job is over, or the pattern disarmed: nothing more is tested. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer();
    this.clearLine();
  }

  /**
   * A plain chunk whose complete lines cannot match: they are passed over, and only what follows the
   * last line break is rendered into the unfinished line. False when the chunk must be tested.
   */
  private passesOver(bytes: Uint8Array): boolean {
    const required = this.required;
    if (!required || !this.atRest || !plainChunk(bytes)) return false;
    if (mayHoldMatch(required, bytes, (code) => this.lineHas.has(code))) return false;
    const lf = bytes.lastIndexOf(0x0a);
    if (lf !== -1) this.clearLine();
    const rest = lf === -1 ? bytes : bytes.subarray(lf + 1);
    if (rest.length > 0) {
      this.appendToLine(this.render(rest));
      this.armTimer();
    }
    return true;
  }

  private render(bytes: Uint8Array): string {
    const text = this.terminal.write(this.utf8.decode(bytes, { stream: true }), false);
    this.atRest = !this.terminal.holding && bytes[bytes.length - 1]! < 0x80;
    return text;
  }

  /** Tests every line `text` completes; keeps its unfinished end. */
  private scan(text: string): void {
    let first: string | undefined;
    let count = 0;
    let start = 0;
    for (let lf = text.indexOf("\n"); lf !== -1; lf = text.indexOf("\n", start)) {
      const piece = text.slice(start, lf);
      start = lf + 1;
      let tested = piece;
      if (this.lineGrown || !this.line.empty) {
        this.line.append(piece);
        tested = this.lineText();
        this.clearLine();
      }
      if (!this.pattern.test(tested)) continue;
      count++;
      first ??= this.pattern.excerpt(tested);
    }
    if (start < text.length) this.appendToLine(text.slice(start));
    if (first !== undefined) this.options.onHit({ line: first, count });
  }

  private appendToLine(text: string): void {
    if (text.length === 0) return;
    this.line.append(text);
    this.lineGrown = true;
    for (const code of this.candidates) if (!this.lineHas.has(code) && text.includes(String.fromCodePoint(code))) this.lineHas.add(code);
  }

  private lineText(): string {
    const parts = this.line.parts();
    return parts.length === 1 ? parts[0]! : `${parts[0]}…${parts[1]}`;
  }

  private clearLine(): void {
    this.line.clear();
    this.lineHas.clear();
    this.lineGrown = false;
  }

  /** One timer at a time, moved on lazily: a flood does not re-arm it per chunk. */
  private armTimer(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = this.clock.setTimeout(() => this.quietCheck(), this.quietMs);
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The unfinished line after {@link PATTERN_WAKE_QUIET_MS} of silence: tested once, as a prompt. */
  private quietCheck(): void {
    this.timer = undefined;
    if (this.stopped || this.suspended || !this.lineGrown) return;
    const waited = this.clock.now() - this.lastOutput;
    if (waited < this.quietMs) {
      this.timer = this.clock.setTimeout(() => this.quietCheck(), this.quietMs - waited);
      return;
    }
    this.lineGrown = false;
    const text = this.lineText();
    if (this.pattern.test(text)) this.options.onHit({ line: this.pattern.excerpt(text), count: 1 });
  }
}
