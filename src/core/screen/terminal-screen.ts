/**
 * The screen of one PTY job, as a person at a terminal would see it. Owns a headless terminal
 * emulator (`@xterm/headless`) fed every byte the job prints, in order; the queue in front of it,
 * bounded so a flood costs neither unbounded memory nor an exception; the answers the emulator gives
 * to terminal queries (cursor position, device attributes), handed to the caller for the PTY's input;
 * and the snapshot the model and the TUI read, sanitized here like every other text they see.
 *
 * Parsing is asynchronous (the emulator parses in slices between other events), so `snapshot()`
 * resolves once everything written before the call is parsed; `peek()` is the synchronous view of
 * what is parsed so far.
 */
import { createRequire } from "node:module";
import type * as XTermModule from "@xterm/headless";
import { metadataLine } from "../output/visible-text.ts";
import { SCREEN_BACKLOG_BYTES, SCREEN_CHUNK_BYTES, SCREEN_FEED_BYTES, SCREEN_SCROLLBACK_LINES } from "../shared/constants.ts";

type XTerm = XTermModule.Terminal;

const requireFromHere = createRequire(import.meta.url);
let terminalClass: typeof XTermModule.Terminal | undefined;

/**
 * The emulator's class, loaded on the first screen: loading it takes 20–45 ms, which Pi's start
 * should not pay when no PTY job ever runs. (`require`, because the package is CommonJS with
 * exports that a named ESM import cannot see.)
 */
function terminalConstructor(): typeof XTermModule.Terminal {
  terminalClass ??= (requireFromHere("@xterm/headless") as typeof XTermModule).Terminal;
  return terminalClass;
}

/** CAN: ends any escape sequence the parser is in, so skipped bytes cannot leave it inside one. */
const CAN = Buffer.of(0x18);

export interface ScreenSnapshot {
  /**
   * The screen's rows from the top, at most `rows` of them: trailing spaces trimmed from each, and
   * empty rows below both the last non-empty row and the cursor left out. Already safe to show: no
   * control characters; invisible characters (bidi controls, zero-width, separators) as `<U+XXXX>`.
   */
  lines: string[];
  /** 1-based, within the screen (a cursor waiting to wrap past the last column reports the last column). */
  cursor: { row: number; col: number };
  /** The program is on the alternate screen (DECSET 1049, 1047 or 47): vim, less (procps `top` is not). */
  alternate: boolean;
  /** The program repaints the normal screen by cursor addressing (`top`, some progress UIs); see {@link TerminalScreen.repainting}. */
  repainting: boolean;
  cols: number;
  rows: number;
  /** Output bytes the emulator skipped since it was created because it fell behind a flood (0 normally). */
  skippedBytes: number;
}

/** How a terminal sends keys to this program (see {@link TerminalScreen.keyModes}). */
export interface KeyModes {
  applicationCursor: boolean;
  bracketedPaste: boolean;
}

export interface TerminalScreenOptions {
  cols: number;
  rows: number;
  /**
   * Bytes the emulator answers to a query the program sent (DSR `ESC[6n`, DA `ESC[c`, …), in order;
   * the caller writes them to the PTY's input, while the job lives. Called during parsing: a throw is
   * caught and ignored, since it would otherwise escape from the emulator's timer.
   */
  onReply?: (bytes: Buffer) => void;
  /** The program entered (true) or left (false) the alternate screen; called as those bytes are parsed. */
  onAlternateChange?: (alternate: boolean) => void;
}

interface Resize {
  cols: number;
  rows: number;
}

/** One queued operation; `seq` numbers them in the order they were asked for. */
interface Item {
  seq: number;
  data?: Buffer;
  resize?: Resize;
}

interface Waiter {
  seq: number;
  resolve(snapshot: ScreenSnapshot): void;
}

/** A throw from the caller's callback must not escape into the emulator's parse loop (an uncaught exception). */
function guarded<T>(callback: ((value: T) => void) | undefined): (value: T) => void {
  return (value) => {
    try {
      callback?.(value);
    } catch {
      // the caller's problem; the parser must go on
    }
  };
}

/** The emulator's size for `cols`×`rows`: whole cells, at least 2×1, which it requires. */
function screenSize(cols: number, rows: number): Resize {
  if (!Number.isFinite(cols) || !Number.isFinite(rows)) throw new RangeError(`a screen size must be finite numbers, not ${cols}×${rows}`);
  return { cols: Math.max(2, Math.floor(cols)), rows: Math.max(1, Math.floor(rows)) };
}

export class TerminalScreen {
  private readonly term: XTerm;
  /** Operations not yet handed to the emulator, oldest first from `head`. */
  private queue: Item[] = [];
  private head = 0;
  /** Data bytes in the queue. */
  private queued = 0;
  /** Data bytes handed to the emulator whose parse has not finished. */
  private inFlight = 0;
  private nextSeq = 0;
  /** The last operation the screen reflects (or skipped past). */
  private doneSeq = -1;
  private skipped = 0;
  /** Bytes were skipped since the last piece handed over: the next one starts with CAN. */
  private gap = false;
  private waiters: Waiter[] = [];
  /** Set by `dispose`: the screen as it was then, returned from then on. */
  private final: ScreenSnapshot | undefined;
  /** Absolute cursor moves up the normal screen since it last scrolled (or the program switched screens). */
  private upwardMoves = 0;

  constructor(options: TerminalScreenOptions) {
    const size = screenSize(options.cols, options.rows);
    const Terminal = terminalConstructor();
    this.term = new Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: SCREEN_SCROLLBACK_LINES,
      // Reading the buffer is "proposed API" in 6.0.0 and throws without this.
      allowProposedApi: true,
      // The emulator logs to the console, which inside Pi is its TUI.
      logLevel: "off",
      // `ESC[18t` (text area size in characters) is how some programs ask for the size.
      windowOptions: { getWinSizeChars: true },
    });
    // Nothing is told after `dispose`, even for bytes the emulator had queued before it.
    const reply = guarded(options.onReply);
    this.term.onData((data) => {
      if (!this.final) reply(Buffer.from(data, "utf8"));
    });
    this.term.onBinary((data) => {
      if (!this.final) reply(Buffer.from(data, "latin1"));
    });
    const alternate = guarded(options.onAlternateChange);
    this.term.buffer.onBufferChange((buffer) => {
      this.upwardMoves = 0;
      if (!this.final) alternate(buffer.type === "alternate");
    });
    // CUP, HVP and VPA to a row above the cursor: the program draws over what it drew (the handler only looks).
    for (const final of ["H", "f", "d"]) this.term.parser.registerCsiHandler({ final }, (params) => this.moved(params[0]));
    this.term.onScroll(() => {
      this.upwardMoves = 0;
    });
  }

  /**
   * Whether the program repaints the normal screen by cursor addressing, without the alternate screen
   * (`top`): it moved the cursor up by absolute addressing twice since the screen last scrolled. A
   * program that cleared the screen once and then prints lines is not; printing past the bottom ends it.
   */
  get repainting(): boolean {
    return this.final ? this.final.repainting : this.upwardMoves >= 2;
  }

  private moved(row: number | number[] | undefined): boolean {
    const buffer = this.term.buffer.active;
    if (buffer.type === "normal" && (typeof row === "number" && row > 0 ? row : 1) - 1 < buffer.cursorY) this.upwardMoves++;
    return false;
  }

  /**
   * Feeds output bytes, in the order the job printed them. Returns at once; keeps a reference to
   * `bytes` until parsed (do not reuse the buffer). Past {@link SCREEN_BACKLOG_BYTES} waiting, the
   * oldest waiting bytes are skipped (see {@link ScreenSnapshot.skippedBytes}). Ignored after `dispose`.
   */
  write(bytes: Buffer): void {
    if (this.final || bytes.length === 0) return;
    this.queue.push({ seq: this.nextSeq++, data: bytes });
    this.queued += bytes.length;
    if (this.queued > SCREEN_BACKLOG_BYTES) this.skipOldest(this.queued - SCREEN_BACKLOG_BYTES);
    this.pump();
  }

  /**
   * Resizes the screen after everything written so far is parsed, as the PTY was resized after the
   * program printed it. Fractions are cut and sizes below 2×1 (the emulator's minimum) raised; a
   * size that is not a finite number throws. Ignored after `dispose`.
   */
  resize(cols: number, rows: number): void {
    const size = screenSize(cols, rows);
    if (this.final) return;
    this.queue.push({ seq: this.nextSeq++, resize: size });
    this.pump();
  }

  /**
   * The screen once everything written (and every resize asked for) before this call is parsed:
   * at once when nothing is pending, else within the parse time of at most
   * {@link SCREEN_FEED_BYTES} + {@link SCREEN_BACKLOG_BYTES}. After `dispose`, the screen as it was then.
   */
  snapshot(): Promise<ScreenSnapshot> {
    if (this.final) return Promise.resolve(this.final);
    const seq = this.nextSeq - 1;
    if (this.doneSeq >= seq) return Promise.resolve(this.peek());
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** The screen as parsed so far (it may lag the bytes written by up to the bounds above). */
  peek(): ScreenSnapshot {
    if (this.final) return this.final;
    const { term } = this;
    const buffer = term.buffer.active;
    const lines: string[] = [];
    let lastUsed = -1;
    for (let y = 0; y < term.rows; y++) {
      const text = buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? "";
      // Cells a program filled with spaces are not trimmed by the emulator itself.
      const line = metadataLine(text.replace(/ +$/, ""));
      if (line) lastUsed = y;
      lines.push(line);
    }
    lines.length = Math.max(lastUsed, buffer.cursorY) + 1;
    return {
      lines,
      cursor: { row: buffer.cursorY + 1, col: Math.min(buffer.cursorX, term.cols - 1) + 1 },
      alternate: buffer.type === "alternate",
      repainting: this.repainting,
      cols: term.cols,
      rows: term.rows,
      skippedBytes: this.skipped,
    };
  }

  /**
   * How the program asked keys to be sent, as parsed so far: cursor keys in application mode
   * (`ESC O A` rather than `ESC [ A`, DECCKM: vim, less) and pastes bracketed (DECSET 2004).
   */
  get keyModes(): KeyModes {
    if (this.final) return { applicationCursor: false, bracketedPaste: false };
    const modes = this.term.modes;
    return { applicationCursor: modes.applicationCursorKeysMode, bracketedPaste: modes.bracketedPasteMode };
  }

  /** Whether the program is on the alternate screen, as parsed so far. */
  get alternate(): boolean {
    return this.final ? this.final.alternate : this.term.buffer.active.type === "alternate";
  }

  /** Output bytes written and not yet parsed. */
  get pendingBytes(): number {
    return this.final ? 0 : this.queued + this.inFlight;
  }

  /** Frees the emulator. Pending snapshots resolve with the screen as parsed so far; later calls do nothing. */
  dispose(): void {
    if (this.final) return;
    const last = this.peek();
    this.final = last;
    this.queue = [];
    this.head = 0;
    this.queued = 0;
    this.term.dispose();
    for (const waiter of this.waiters.splice(0)) waiter.resolve(last);
  }

  /** Hands queued operations to the emulator while it has fewer than {@link SCREEN_FEED_BYTES} to parse. */
  private pump(): void {
    while (this.head < this.queue.length && this.inFlight < SCREEN_FEED_BYTES) {
      const item = this.queue[this.head]!;
      if (item.resize) {
        this.shift();
        const { seq, resize } = item;
        // The callback runs once everything handed over before is parsed, and before anything after.
        this.term.write("", () => this.resized(seq, resize));
        continue;
      }
      const data = item.data!;
      const piece = data.length > SCREEN_CHUNK_BYTES ? data.subarray(0, SCREEN_CHUNK_BYTES) : data;
      const last = piece === data;
      if (last) this.shift();
      else item.data = data.subarray(SCREEN_CHUNK_BYTES);
      this.queued -= piece.length;
      this.inFlight += piece.length;
      if (this.gap) {
        this.term.write(CAN);
        this.gap = false;
      }
      const seq = last ? item.seq : -1;
      this.term.write(piece, () => this.parsed(piece.length, seq));
    }
    this.compact();
  }

  private parsed(bytes: number, seq: number): void {
    if (this.final) return;
    this.inFlight -= bytes;
    if (seq >= 0) this.done(seq);
    this.pump();
  }

  private resized(seq: number, size: Resize): void {
    if (this.final) return;
    if (size.cols !== this.term.cols || size.rows !== this.term.rows) this.term.resize(size.cols, size.rows);
    this.done(seq);
  }

  /** Operation `seq` is reflected: resolve the snapshots waiting for it or an earlier one. */
  private done(seq: number): void {
    this.doneSeq = seq;
    if (this.waiters.length === 0 || this.waiters[0]!.seq > seq) return;
    const ready = this.waiters.filter((waiter) => waiter.seq <= seq);
    this.waiters = this.waiters.filter((waiter) => waiter.seq > seq);
    const snapshot = this.peek();
    for (const waiter of ready) waiter.resolve(snapshot);
  }

  /**
   * Skips the oldest `excess` waiting data bytes. Resizes stay (they are tiny and the size matters).
   * A skipped operation counts as done once a later one is: the newest write always keeps its tail
   * here, so a snapshot waiting for a skipped write resolves when the bytes after the gap are parsed.
   */
  private skipOldest(excess: number): void {
    let left = excess;
    for (let i = this.head; i < this.queue.length && left > 0; i++) {
      const item = this.queue[i]!;
      if (!item.data || item.data.length === 0) continue;
      const cut = Math.min(item.data.length, left);
      item.data = item.data.subarray(cut);
      left -= cut;
    }
    const skipped = excess - left;
    this.queued -= skipped;
    this.skipped += skipped;
    this.gap = true;
    // Drop the data items emptied at the front; one emptied behind a resize is skipped in `pump`.
    while (this.head < this.queue.length && this.queue[this.head]!.data?.length === 0) this.shift();
  }

  private shift(): void {
    this.head++;
  }

  /** Drops handed-over items from the array now and then, so the queue stays linear in its use. */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
