/*
 * The screen of one PTY job as a person would see it: a headless emulator (`@xterm/headless`, which
 * parses ~20 MB/s) fed every byte in order through a bounded queue, its answers to terminal queries
 * handed to the caller, and the sanitized snapshot results read. `snapshot()` resolves once everything
 * written before it is parsed; `peek()` is what is parsed so far.
 */
import { createRequire } from "node:module";
import type * as XTermModule from "@xterm/headless";
import { metadataLine } from "../output/visible-text.ts";
import { SCREEN_SCROLLBACK_LINES } from "../shared/constants.ts";

/** Bytes handed to the emulator and not yet parsed: far from its 50 MB limit (where `write` throws). */
export const SCREEN_FEED_BYTES = 256 * 1024;
/** The largest piece handed over at once: parsed without yielding (~3 ms at 20 MB/s). */
export const SCREEN_CHUNK_BYTES = 64 * 1024;
/** Bytes waiting beyond the feed; past it the oldest are skipped, so a screen request parses ~1.25 MiB (~60 ms) at most. */
export const SCREEN_BACKLOG_BYTES = 1024 * 1024;

type XTerm = XTermModule.Terminal;

const requireFromHere = createRequire(import.meta.url);
let terminalClass: typeof XTermModule.Terminal | undefined;

/** Loaded on the first screen (20–45 ms Pi's start should not pay); `require`: CommonJS exports a named import cannot see. */
function terminalConstructor(): typeof XTermModule.Terminal {
  terminalClass ??= (requireFromHere("@xterm/headless") as typeof XTermModule).Terminal;
  return terminalClass;
}

/** CAN: ends any escape sequence the parser is in, so skipped bytes cannot leave it inside one. */
const CAN = Buffer.of(0x18);

export interface ScreenSnapshot {
  /**
   * The rows from the top, trailing spaces trimmed, empty rows below the last used row and the cursor
   * left out. Safe to show: no controls; invisible characters (bidi, zero-width) as `<U+XXXX>`.
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
  /** The emulator's answers to the program's queries (DSR `ESC[6n`, DA `ESC[c`), in order, for the PTY's input. */
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

  /** Keeps a reference to `bytes` until parsed (do not reuse the buffer); ignored after `dispose`. */
  write(bytes: Buffer): void {
    if (this.final || bytes.length === 0) return;
    this.queue.push({ seq: this.nextSeq++, data: bytes });
    this.queued += bytes.length;
    if (this.queued > SCREEN_BACKLOG_BYTES) this.skipOldest(this.queued - SCREEN_BACKLOG_BYTES);
    this.pump();
  }

  /** After everything written so far is parsed, as the PTY was resized after the program printed it. */
  resize(cols: number, rows: number): void {
    const size = screenSize(cols, rows);
    if (this.final) return;
    this.queue.push({ seq: this.nextSeq++, resize: size });
    this.pump();
  }

  /** Once everything written and resized before this call is parsed; after `dispose`, the screen as it was then. */
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

  /** Cursor keys in application mode (DECCKM: `ESC O A`, vim, less) and pastes bracketed (DECSET 2004), as parsed so far. */
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
        this.head++;
        const { seq, resize } = item;
        // The callback runs once everything handed over before is parsed, and before anything after.
        this.term.write("", () => this.resized(seq, resize));
        continue;
      }
      const data = item.data!;
      const piece = data.length > SCREEN_CHUNK_BYTES ? data.subarray(0, SCREEN_CHUNK_BYTES) : data;
      const last = piece === data;
      if (last) this.head++;
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
   * Skips the oldest `excess` waiting data bytes (resizes stay). The newest write keeps its tail, so
   * a snapshot waiting for a skipped write resolves when the bytes after the gap are parsed.
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
    while (this.head < this.queue.length && this.queue[this.head]!.data?.length === 0) this.head++;
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
