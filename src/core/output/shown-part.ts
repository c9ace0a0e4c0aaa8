import { MAX_CONTROL_SEQUENCE_CHARS } from "../shared/constants.ts";

/**
 * Invariant: a read whose text is decoded only in part shows the model exactly what decoding all of
 * it would have shown. A result shows at most the end of a read's text (Pi's cap: 50 KiB or 2 000
 * lines) and, in Codex's format, its start; a flood leaves up to 1 MiB retained between two reads.
 * Rendering all of it costs milliseconds and a megabyte of heap per report, for text the cap throws
 * away. So the decoder renders the end from a start found here and stops as soon as the rendered
 * part is longer than the cap: the part is then the end of the whole render, and the cap cuts it
 * exactly where it would cut the whole.
 *
 * A start is a byte where the whole render is outside every control sequence and on a line it is not
 * redrawing; from there, a renderer with nothing held renders exactly what the whole render does.
 * Both are decided by a look back of bounded length, never by rendering:
 * - Every ESC and C1 control is read by the renderer outside any sequence (a control string or a CSI
 *   ends at the first one; an abandoned string's body, shown as text, holds none), so the last one
 *   before the cut is a start for the sequence state: a string it opens is then read whole, from its
 *   introducer. Starting inside the string instead, with its length so far, could not be exact: a
 *   string abandoned later is shown as text from its first character, before the cut. With no control
 *   within a sequence's reach ({@link MAX_CONTROL_SEQUENCE_CHARS} characters, at most 3 bytes each),
 *   nothing can be open at the cut itself.
 * - A lone CR, a backspace, a cursor move within the line or an erase in it (`CSI G`, `C`, `D`, `K`)
 *   redraws its line from the line's start, until the LF that ends it; a LF ends a line unless a
 *   control string hides it (terminated after it) or holds it back (still open at the end of the
 *   read). So a start may be mid-line only on a line with none of them between two LFs the renderer
 *   takes (or the origin, or the end of the bytes); otherwise the latest line start it takes is used.
 * What precedes the bytes (a sequence held from the previous read, or past a retention gap, the head
 * and the omission marker) is summed up in a {@link StreamOrigin}.
 */

/** What a result can show of one read's text; the rest need not be decoded. */
export interface ShownPart {
  /** Bytes of text shown from the start of the read (Codex's head); 0 when only the end is shown. */
  headBytes: number;
  /** Bytes of text shown from the end. */
  tailBytes: number;
  /** Lines shown from the end (Pi's 2 000); `Infinity` when only bytes limit them. */
  tailLines: number;
}

/** Where a read's text was left undecoded: between `text[at - 1]` and `text[at]`, `bytes` of output (the omission marker, if it fell there, included). */
export interface Elision {
  at: number;
  bytes: number;
}

/** What the renderer's state is where the bytes a start is looked for in begin. */
export interface StreamOrigin {
  /** A control sequence may be open there: held back from the previous read, or left open by the head before a retention gap. */
  sequenceMayBeOpen: boolean;
  /** The line there may be being redrawn: a CR in what was held back, shown if the sequence is abandoned. */
  lineMayBeRedrawn: boolean;
  /** The bytes begin a line, with nothing open (past a retention gap, after the omission marker's LF). */
  startsLine: boolean;
}

/** Bytes that begin a read with nothing held back: nothing open, no line being redrawn, mid-line. */
export const CLEAR_ORIGIN: StreamOrigin = { sequenceMayBeOpen: false, lineMayBeRedrawn: false, startsLine: false };

const BEL = 0x07;
const LF = 0x0a;
const CAN = 0x18;
const SUB = 0x1a;
const ESC = 0x1b;
const BACKSLASH = 0x5c;
/** Lead byte of U+0080–U+00BF in UTF-8: a C1 control is C2 80–C2 9F. */
const C1_LEAD = 0xc2;
const C1_ST = 0x9c;

/** A local binding: a loader that compiles imports to getters (tsx, jiti) would call one per use. */
const MAX_CHARS = MAX_CONTROL_SEQUENCE_CHARS;

/** Bytes a control sequence may span, introducer included: its characters at 3 UTF-8 bytes each (a 4-byte one is two), with room for the introducer and the terminator. */
const SEQUENCE_REACH_BYTES = 3 * (MAX_CHARS + 4);

/**
 * Control strings the line-start search steps back over before the read is rendered whole. Real
 * output hides lines in a few strings (an image, a hyperlink); a read made of nothing else is
 * rendered whole, which stays linear.
 */
const MAX_HIDING_STRINGS = 64;

/** Where a control string ends, when not at a terminator: abandoned (its body shown as text), or still open where the bytes end. */
const ABANDONED = -1;
const STILL_OPEN = Number.POSITIVE_INFINITY;

/** 0: not a control string; 1: OSC (ended by ST or BEL); 2: DCS, SOS, PM, APC (ended by ST). */
function stringKind(bytes: Buffer, control: number): 0 | 1 | 2 {
  const next = bytes[control + 1];
  if (bytes[control] === ESC) {
    if (next === 0x5d) return 1; // ]
    return next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f ? 2 : 0; // P X ^ _
  }
  if (next === 0x9d) return 1;
  return next === 0x90 || next === 0x98 || next === 0x9e || next === 0x9f ? 2 : 0;
}

/** The last ESC, or C1 control (as C2 80–9F), in `bytes[from, to)`, or -1. */
function lastControl(bytes: Buffer, from: number, to: number): number {
  if (to <= from) return -1;
  const window = bytes.subarray(from, to); // no search goes further back than the window
  const esc = window.lastIndexOf(ESC);
  let c1 = window.lastIndexOf(C1_LEAD);
  // Most C2 bytes lead a Latin-1 letter; look further back only as far as the ESC found.
  while (c1 > esc && !(c1 + 1 < window.length && window[c1 + 1]! >= 0x80 && window[c1 + 1]! <= 0x9f))
    c1 = c1 > 0 ? window.lastIndexOf(C1_LEAD, c1 - 1) : -1;
  const at = Math.max(esc, c1);
  return at === -1 ? -1 : from + at;
}

/** True when a character starts at `at` (a byte that cannot continue one, or one after an ASCII byte). */
function startsCharacter(bytes: Buffer, at: number): boolean {
  return at === 0 || at >= bytes.length || (bytes[at]! & 0xc0) !== 0x80 || bytes[at - 1]! < 0x80;
}

/** True at a zero width joiner (E2 80 8D), whose rendering depends on the character before it. */
function joinerAt(bytes: Buffer, at: number): boolean {
  return bytes[at] === 0xe2 && bytes[at + 1] === 0x80 && bytes[at + 2] === 0x8d;
}

/** The last occurrence of one byte before a position, for positions that only move back: each byte is searched once. */
class LastByte {
  private askedAt = -1;
  private found = -1;

  constructor(
    private readonly bytes: Buffer,
    private readonly byte: number,
  ) {}

  /** The index of the last such byte in `bytes[0, at)`, or -1. */
  before(at: number): number {
    if (at > this.askedAt || this.found >= at) this.found = at > 0 ? this.bytes.lastIndexOf(this.byte, at - 1) : -1;
    this.askedAt = at;
    return this.found;
  }
}

/** What may redraw a line, in bytes read as Latin-1: a CR, a backspace, a CSI (ESC [ or C2 9B) that moves the cursor in the line or erases in it. */
const REDRAW = /[\r\b]|(?:\x1b\[|\xc2\x9b)[\x20-\x3f]*[GCDK]/;

/** True when `bytes[from, to)` hold what may redraw a line (a native scan: a line of colours holds many ESCs). */
function redrawsLine(bytes: Buffer, from: number, to: number): boolean {
  const line = bytes.subarray(from, Math.max(from, to));
  if (line.indexOf(0x0d) !== -1 || line.indexOf(0x08) !== -1) return true;
  // Plain text needs no copy: a CSI starts at the first ESC or C2 at the earliest.
  const esc = line.indexOf(ESC);
  const c1 = line.indexOf(C1_LEAD);
  const sequence = esc === -1 ? c1 : c1 === -1 ? esc : Math.min(esc, c1);
  return sequence !== -1 && REDRAW.test(line.toString("latin1", sequence));
}

/** The look back over one read's bytes; see the module comment. */
class StartScan {
  private readonly lfs: LastByte;
  private redraws: boolean | undefined;

  constructor(
    private readonly bytes: Buffer,
    private readonly origin: StreamOrigin,
  ) {
    this.lfs = new LastByte(bytes, LF);
  }

  /** The latest start at or before `limit` and at or after `floor`, mid-line if its line is not being redrawn, or -1. */
  start(limit: number, floor: number): number {
    if (limit < floor) return -1;
    const at = this.characterStart(Math.min(limit, this.bytes.length));
    const outside = at === -1 ? -1 : this.outsideSequences(at);
    if (outside >= floor && this.onLineNotRedrawn(outside)) return outside;
    return this.lineStart(limit, floor);
  }

  /** The latest line start (after a LF the renderer takes, or at 0 when the origin starts a line) at or before `limit` and at or after `floor`, or -1. */
  lineStart(limit: number, floor: number): number {
    if (limit < floor) return -1;
    let before = Math.min(limit, this.bytes.length);
    for (let tries = 0; tries <= MAX_HIDING_STRINGS; tries++) {
      const lf = this.lfs.before(before);
      if (lf === -1) return this.origin.startsLine && floor <= 0 ? 0 : -1;
      if (lf + 1 < floor) return -1;
      const hiding = this.openStringAt(lf);
      if (hiding === -1) return lf + 1;
      before = hiding;
    }
    return -1;
  }

  /**
   * The opener of a control string that may hide the byte at `at` or, at the end of the bytes, stay
   * open past it; 0 when one from before the bytes may; -1 when none can.
   */
  openStringAt(at: number): number {
    const control = lastControl(this.bytes, Math.max(0, at - SEQUENCE_REACH_BYTES), at);
    if (control === -1) return this.nothingOpenFromOrigin(at) ? -1 : 0;
    const kind = stringKind(this.bytes, control);
    if (kind === 0) return -1; // a CSI or an escape ends at a LF, and nothing is open after a terminator
    return this.stringEnd(control, kind === 1) > at ? control : -1;
  }

  /** `at` or the latest byte before it where a character other than a joiner starts (at most a few back), or -1. */
  private characterStart(at: number): number {
    for (let p = at; p >= 0 && at - p <= 8; p--) if (startsCharacter(this.bytes, p) && !joinerAt(this.bytes, p)) return p;
    return -1;
  }

  /** `at` when no sequence can be open there; else the last ESC or C1 control before it (which the renderer reads outside any). */
  private outsideSequences(at: number): number {
    const control = lastControl(this.bytes, Math.max(0, at - SEQUENCE_REACH_BYTES), at);
    if (control === -1) return this.nothingOpenFromOrigin(at) ? at : -1;
    const lf = this.lfs.before(at);
    // Past a LF the renderer takes, no sequence was opened since: nothing is open at `at`.
    return lf > control && this.openStringAt(lf) === -1 ? at : control;
  }

  /** With no control before `at` within reach: whatever the origin held open has ended by `at`. */
  private nothingOpenFromOrigin(at: number): boolean {
    return at >= SEQUENCE_REACH_BYTES || !this.origin.sequenceMayBeOpen;
  }

  /**
   * True when the line at `at` (outside any sequence) is not redrawn before or after `at`, so the
   * part's line is the end of the whole render's (a redraw after `at` would start from the line's
   * start): nothing that redraws between two LFs the renderer takes, or the origin and the end of the
   * bytes. A LF a control string may hide is taken only when nothing in the bytes redraws.
   */
  private onLineNotRedrawn(at: number): boolean {
    const { bytes } = this;
    const lf = this.lfs.before(at);
    if (lf === -1 ? this.origin.lineMayBeRedrawn : (this.origin.lineMayBeRedrawn || this.anyRedraw()) && this.openStringAt(lf) !== -1)
      return false;
    const nextLf = bytes.indexOf(LF, at);
    if (redrawsLine(bytes, lf + 1, nextLf === -1 ? bytes.length : nextLf)) return false;
    return nextLf === -1 || !this.anyRedraw() || this.openStringAt(nextLf) === -1;
  }

  /** Whether anything in the bytes may redraw a line (looked for once, only where a control string may hide a LF). */
  private anyRedraw(): boolean {
    this.redraws ??= redrawsLine(this.bytes, 0, this.bytes.length);
    return this.redraws;
  }

  /**
   * Where the control string opened at `opener` is terminated, as the renderer reads it:
   * {@link ABANDONED} when it is abandoned (by another ESC or C1 control, CAN, SUB or its length:
   * then its body is shown as text), {@link STILL_OPEN} when the bytes end first.
   */
  private stringEnd(opener: number, osc: boolean): number {
    const { bytes } = this;
    const n = bytes.length;
    const body = opener + 2; // ESC ] and C2 9D alike
    const stop = Math.min(n, body + 3 * (MAX_CHARS + 1));
    for (let k = body; k < stop; k++) {
      const c = bytes[k]!;
      if (c > ESC && c !== C1_LEAD) continue;
      if (c === ESC) {
        if (k + 1 >= n) return STILL_OPEN; // perhaps the first half of ST
        return bytes[k + 1] === BACKSLASH ? this.terminated(body, k) : ABANDONED;
      }
      if (c === C1_LEAD) {
        if (k + 1 >= n) return STILL_OPEN;
        const next = bytes[k + 1]!;
        if (next >= 0x80 && next <= 0x9f) return next === C1_ST ? this.terminated(body, k) : ABANDONED;
      } else if (c === CAN || c === SUB) return ABANDONED;
      else if (c === BEL && osc) return this.terminated(body, k);
    }
    // Past `stop`, more than the bound's characters went by without a terminator.
    return stop < n || this.charactersIn(body, n, true) > MAX_CHARS ? ABANDONED : STILL_OPEN;
  }

  /** A terminator at `at` ends the string whose body starts at `body`, unless the bound abandoned it first. */
  private terminated(body: number, at: number): number {
    if (at - body <= MAX_CHARS) return at;
    return this.charactersIn(body, at, false) > MAX_CHARS ? ABANDONED : at;
  }

  /** UTF-16 code units of `bytes[from, to)` as decoded (the bound counts them); `toEnd`: an unfinished character at the end is not one yet. */
  private charactersIn(from: number, to: number, toEnd: boolean): number {
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(this.bytes.subarray(from, to), { stream: toEnd }).length;
  }
}

/**
 * The latest byte at or before `limit` and at or after `floor` from which rendering `bytes` gives
 * exactly the end of what rendering all of them after `origin` gives, or -1: mid-line where that is
 * safe, else at a line start.
 */
export function partStart(bytes: Buffer, limit: number, floor: number, origin: StreamOrigin): number {
  return new StartScan(bytes, origin).start(limit, floor);
}

/**
 * The latest safe line start in `bytes` at or before `limit` and at or after `floor`, or -1. A line
 * starts after a LF, and at 0 when `zeroStartsLine` (the tail after the omission marker, which ends
 * in a LF).
 */
export function safeLineStart(
  bytes: Buffer,
  limit: number,
  floor: number,
  zeroStartsLine: boolean,
  origin: StreamOrigin = CLEAR_ORIGIN,
): number {
  return new StartScan(bytes, { ...origin, startsLine: zeroStartsLine && !origin.sequenceMayBeOpen }).lineStart(limit, floor);
}

/**
 * The origin of bytes that follow a renderer holding `held` back (a read's bytes, after the previous
 * read's); `c1LeadHeld` when the previous read ended in the first byte of a C1 control's UTF-8 form
 * (C2), which the bytes may complete.
 */
export function originAfter(held: string, c1LeadHeld: boolean): StreamOrigin {
  // What the held sequence holds is shown if it is abandoned: a CR, a backspace or a CSI in it may redraw the line.
  return { sequenceMayBeOpen: held.length > 0 || c1LeadHeld, lineMayBeRedrawn: /[\r\b\x1b\x9b]/.test(held.slice(1)), startsLine: false };
}

/**
 * The origin of the tail past a retention gap: the head (read after `headOrigin`) and the omission
 * marker come first. The marker ends in a LF, and nothing in it can end a control string, so a
 * string the head leaves open may run on into the tail, hiding the marker.
 */
export function originPastGap(head: Buffer, headOrigin: StreamOrigin): StreamOrigin {
  const open = new StartScan(head, headOrigin).openStringAt(head.length) !== -1;
  return { sequenceMayBeOpen: open, lineMayBeRedrawn: open, startsLine: !open };
}

/** True when rendered `text` is longer than what `shown` keeps of its end: the cap cuts it as it would cut the whole. */
export function exceedsTail(text: string, shown: ShownPart): boolean {
  if (Buffer.byteLength(text) > shown.tailBytes) return true;
  if (!Number.isFinite(shown.tailLines)) return false;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) if (++lines > shown.tailLines) return true;
  return false;
}
