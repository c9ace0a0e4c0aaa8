import { MAX_CONTROL_SEQUENCE_CHARS } from "../shared/constants.ts";

/**
 * Invariant: a read whose text is decoded only in part shows the model exactly what decoding all of
 * it would have shown. A result shows at most the end of a read's text (Pi's cap: 50 KiB or 2 000
 * lines) and, in Codex's format, its start; a flood leaves up to 1 MiB retained between two reads.
 * Decoding and rendering all of it costs some 6.5 ms and a megabyte of heap per report, for text the
 * cap throws away. So the decoder renders the end from a line start on and stops as soon as the
 * rendered part is longer than the cap (then the cap cuts it exactly where it would cut the whole);
 * this module finds where such a part may start in the raw bytes.
 *
 * Rendering is line by line (a CR redraw ends at its LF; a CSI cannot contain a LF) with one
 * exception: a control string (OSC, DCS, SOS, PM, APC) may run across lines until its terminator,
 * hiding them. A line start is therefore safe only where no control string can still be open: the
 * last introducer within reach (a string is abandoned after {@link MAX_CONTROL_SEQUENCE_CHARS}
 * characters, at most 3 bytes each) is followed by something that ends it.
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

const LF = 0x0a;
const BEL = 0x07;
const ESC = 0x1b;
/** Lead byte of U+0080–U+00BF in UTF-8: a C1 control is C2 80–C2 9F. */
const C1_LEAD = 0xc2;

/** Bytes a control string may span before it is abandoned: its characters at 3 UTF-8 bytes each (a 4-byte one is two). */
const STRING_REACH_BYTES = 3 * MAX_CONTROL_SEQUENCE_CHARS + 8;

/** ESC P, ESC X, ESC ], ESC ^, ESC _ open a control string. */
function opensStringAfterEsc(next: number): boolean {
  return next === 0x50 || next === 0x58 || next === 0x5d || next === 0x5e || next === 0x5f;
}

/** C1 DCS, SOS, OSC, PM, APC (second byte after C2) open one. */
function opensStringAfterC1(next: number): boolean {
  return next === 0x90 || next === 0x98 || next === 0x9d || next === 0x9e || next === 0x9f;
}

/** The last ESC, or C1 control (as C2 80–9F), in `bytes[from, to)`: `[index, length]`, or undefined. */
function lastControl(bytes: Buffer, from: number, to: number): [number, number] | undefined {
  const esc = to > 0 ? bytes.lastIndexOf(ESC, to - 1) : -1;
  let c1 = to > 0 ? bytes.lastIndexOf(C1_LEAD, to - 1) : -1;
  // Most C2 bytes lead a Latin-1 letter; look further back only as far as the ESC found.
  while (c1 >= Math.max(from, esc + 1) && !(c1 + 1 < to && bytes[c1 + 1]! >= 0x80 && bytes[c1 + 1]! <= 0x9f))
    c1 = bytes.lastIndexOf(C1_LEAD, c1 - 1);
  const at = Math.max(esc, c1 >= from ? c1 : -1);
  if (at < from) return undefined;
  return [at, at === esc ? 1 : 2];
}

/**
 * The start of a control string that may still be open at `at`, or -1. Any ESC or C1 control ends a
 * string (ST, or abandoned: then its body is shown as text, and it shows the same from a line start),
 * so only the last one within reach can be open; an OSC also ends at BEL.
 */
function openStringBefore(bytes: Buffer, at: number): number {
  const from = Math.max(0, at - STRING_REACH_BYTES);
  const last = lastControl(bytes, from, at);
  if (!last) return -1;
  const [index, length] = last;
  // The byte after ESC names the sequence; a C1 control is named by its own second byte.
  const kind = bytes[index + 1]!;
  const opens = length === 1 ? opensStringAfterEsc(kind) : opensStringAfterC1(kind);
  if (!opens) return -1;
  const osc = length === 1 ? kind === 0x5d : kind === 0x9d;
  if (osc) {
    const bell = bytes.indexOf(BEL, index + 2); // the body follows ESC ] and C2 9D alike
    if (bell !== -1 && bell < at) return -1;
  }
  return index;
}

/**
 * The latest safe line start in `bytes` at or before `limit` and at or after `floor`, or -1. A line
 * starts after a LF, and at 0 when `zeroStartsLine` (the tail after the omission marker, which ends
 * in a LF).
 */
export function safeLineStart(bytes: Buffer, limit: number, floor: number, zeroStartsLine: boolean): number {
  let before = Math.min(limit, bytes.length);
  while (before >= floor) {
    const lf = before > 0 ? bytes.lastIndexOf(LF, before - 1) : -1;
    const start = lf === -1 ? (zeroStartsLine ? 0 : -1) : lf + 1;
    if (start < floor) return -1;
    const open = openStringBefore(bytes, start);
    if (open === -1) return start;
    before = open;
  }
  return -1;
}

/** True when rendered `text` is longer than what `shown` keeps of its end: the cap cuts it as it would cut the whole. */
export function exceedsTail(text: string, shown: ShownPart): boolean {
  if (Buffer.byteLength(text) > shown.tailBytes) return true;
  if (!Number.isFinite(shown.tailLines)) return false;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) if (++lines > shown.tailLines) return true;
  return false;
}
