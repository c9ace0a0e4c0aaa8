/*
 * output/ — a job's bytes as the text the model and the TUI read. At a glance:
 * 1. head-tail-buffer keeps the bytes between two reads (1 MiB: a head, a tail, the gap counted);
 * 2. this file decodes a read as UTF-8, continuing the previous read, and renders it once:
 * 3. terminal-text strips control sequences and redraws lines (line-cells, text-builder), making
 *    invisible characters visible (visible-text); line-stream does the same line by line for patterns;
 * 4. printed-tally counts what the job printed for the honest footer.
 *
 * May import: shared.
 */
import { omissionMarker, type RetainedOutput } from "./head-tail-buffer.ts";
import { MAX_CONTROL_SEQUENCE_CHARS, TerminalText } from "./terminal-text.ts";

/**
 * A large read is rendered only at its ends: rendered whole, a MiB of random bytes runs at 38 MB/s
 * and a MiB of `CSI 999 G x LF` (text 15 times its size) at 17 MB/s, where the goal is 50. The end
 * holds more than any result shows (Pi's cap: 50 KiB or 2 000 lines; Codex's tail: 20 KB), the
 * start Codex's head (20 KB); reads up to {@link WHOLE_UP_TO_BYTES} are rendered whole.
 */
const SHOWN_TAIL_BYTES = 50 * 1024;
const SHOWN_TAIL_LINES = 2000;
const CODEX_HALF_BYTES = 20_000;
const WHOLE_UP_TO_BYTES = 128 * 1024;

/** Bytes a control sequence may span, introducer and terminator included (its characters at 3 UTF-8 bytes each). */
const SEQUENCE_REACH_BYTES = 3 * (MAX_CONTROL_SEQUENCE_CHARS + 4);
/** Control strings the line-start search steps back over before the read is rendered whole. */
const MAX_HIDING_STRINGS = 64;

const LF = 0x0a;
const ESC = 0x1b;
/** Lead byte of U+0080–U+00BF in UTF-8: a C1 control is C2 80–C2 9F. */
const C1_LEAD = 0xc2;

/** Bytes 0x80–0xBF continue a UTF-8 character; a tail cut by retention may start with some. */
export function continuationPrefix(bytes: Buffer): number {
  let n = 0;
  while (n < bytes.length && n < 3 && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}

/** Where a large read's text was left undecoded: between `text[at - 1]` and `text[at]`, `bytes` of output (the omission marker, if it fell there, included). */
export interface Elision {
  at: number;
  bytes: number;
}

/** A read's text; `elided` says where a middle no result shows was left undecoded. */
export interface DecodedText {
  text: string;
  elided?: Elision;
  /** The read redrew the line the previous read ended on (a spinner's next frame): its first line replaces that line. */
  redrewLine?: boolean;
}

/** The last ESC, or C1 control (as C2 80–9F), in `bytes[from, to)`, or -1. */
function lastControl(bytes: Buffer, from: number, to: number): number {
  const window = bytes.subarray(from, to); // no search goes further back than the window
  const esc = window.lastIndexOf(ESC);
  let c1 = window.lastIndexOf(C1_LEAD);
  // Most C2 bytes lead a Latin-1 letter; look further back only as far as the ESC found.
  while (c1 > esc && !(c1 + 1 < window.length && window[c1 + 1]! >= 0x80 && window[c1 + 1]! <= 0x9f))
    c1 = c1 > 0 ? window.lastIndexOf(C1_LEAD, c1 - 1) : -1;
  const at = Math.max(esc, c1);
  return at === -1 ? -1 : from + at;
}

/** True when the control at `at` opens a control string: OSC, DCS, SOS, PM or APC (ESC ] P X ^ _, or C2 9D 90 98 9E 9F). */
function opensString(bytes: Buffer, at: number): boolean {
  const next = bytes[at + 1];
  if (bytes[at] === ESC) return next === 0x5d || next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f;
  return next === 0x9d || next === 0x90 || next === 0x98 || next === 0x9e || next === 0x9f;
}

/**
 * The latest line start at or before `limit` from which rendering `bytes` gives exactly the end of
 * what rendering all of them gives (whatever a previous read left held), or -1. It follows a LF at
 * least a sequence's reach into the bytes, so nothing from before them is still open there, and where
 * the last ESC or C1 control within that reach opens no control string: every such control is read
 * outside any sequence (it ends a string), and a CSI or an escape ends at a LF at the latest.
 */
export function safeLineStart(bytes: Buffer, limit: number): number {
  let before = Math.min(limit, bytes.length);
  for (let tries = 0; tries <= MAX_HIDING_STRINGS && before > SEQUENCE_REACH_BYTES; tries++) {
    const lf = bytes.lastIndexOf(LF, before - 1);
    if (lf < SEQUENCE_REACH_BYTES) return -1;
    const control = lastControl(bytes, lf - SEQUENCE_REACH_BYTES, lf);
    if (control === -1 || !opensString(bytes, control)) return lf + 1;
    before = control;
  }
  return -1;
}

/** True when `text` holds more than any result shows of its end, so each one cuts it where it would cut the whole. */
function holdsShownTail(text: string): boolean {
  const bytes = Buffer.byteLength(text);
  if (bytes > SHOWN_TAIL_BYTES) return true;
  if (bytes <= CODEX_HALF_BYTES) return false;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) if (++lines > SHOWN_TAIL_LINES) return true;
  return false;
}

/** The first LF at or after `from`, plus one (or the end): a read's start is cut after a whole line. */
function lineEndAfter(bytes: Buffer, from: number): number {
  if (from >= bytes.length) return bytes.length;
  const lf = bytes.indexOf(LF, from);
  return lf === -1 ? bytes.length : lf + 1;
}

/** What the end of a read is found in: the bytes past the gap (a character the gap cut is lost, as in a whole decode), or all of them. */
function streamOf(output: RetainedOutput): Buffer {
  if (output.omittedBytes > 0) return output.tail.subarray(continuationPrefix(output.tail));
  return output.tail.length ? Buffer.concat([output.head, output.tail]) : output.head;
}

const newUtf8 = () => new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Turns a job's output bytes into model text, one read at a time, as if the reads were one stream:
 * a UTF-8 character or a control sequence split between two reads comes out whole in the later one.
 * Where retention dropped the middle, the omission marker stands in the gap (the character cut there
 * is lost, not mangled). The text is then reduced to what a terminal would show. A large read is
 * rendered at its ends only (see {@link SHOWN_TAIL_BYTES}); the streaming state goes on from its end.
 */
export class OutputDecoder {
  private utf8 = newUtf8();
  /** Terminal rendering, with the start of a control sequence the previous read ended in. */
  private terminal = new TerminalText();

  /** Text of `output`; `final` when the job has ended and nothing more will follow. */
  take(output: RetainedOutput, final: boolean): DecodedText {
    return this.takeEnds(output, final) ?? { text: this.takeAll(output, final), redrewLine: this.terminal.redrewFirstLine };
  }

  private takeAll(output: RetainedOutput, final: boolean): string {
    let text = "";
    // No stream past a gap: the gap ends whatever the head left open.
    if (output.omittedBytes > 0) text = `${this.utf8.decode(output.head)}${omissionMarker(output.omittedBytes)}`;
    text += this.utf8.decode(streamOf(output), { stream: !final });
    return this.terminal.write(text, final);
  }

  /** The read's start and end only, or undefined when it is small or no line start near its end is safe. */
  private takeEnds(output: RetainedOutput, final: boolean): DecodedText | undefined {
    if (output.head.length + output.tail.length <= WHOLE_UP_TO_BYTES) return undefined;
    const stream = streamOf(output);
    const end = this.renderEnd(stream, final);
    if (!end) return undefined;
    const start = this.renderStart(output, stream.subarray(0, end.start));
    this.utf8 = end.utf8;
    this.terminal = end.terminal;
    // Left out: what lies between the start as rendered and the end (past a gap: the head and the marker too).
    const gap = output.omittedBytes > 0 ? output.head.length + Buffer.byteLength(omissionMarker(output.omittedBytes)) : 0;
    const bytes = gap + end.start - start.rawBytes;
    return { text: start.text + end.text, ...(bytes > 0 ? { elided: { at: start.text.length, bytes } } : {}) };
  }

  /**
   * The end of `stream`, rendered by decoders of its own from the latest safe line start that gives
   * more text than a result shows; tried again longer (at the rate its text grew, at least twice as
   * long) while it falls short, and given up (the read is rendered whole) once that is half of it.
   */
  private renderEnd(stream: Buffer, final: boolean) {
    // Plain text renders to about its own size; controls and redraws shrink it.
    let want = SHOWN_TAIL_BYTES + SHOWN_TAIL_BYTES / 4 + 4096;
    while (want <= stream.length / 2) {
      const start = safeLineStart(stream, stream.length - want);
      if (start === -1) return undefined;
      const utf8 = newUtf8();
      const terminal = new TerminalText();
      const text = terminal.write(utf8.decode(stream.subarray(start), { stream: !final }), final);
      if (holdsShownTail(text)) return { start, text, utf8, terminal };
      const rendered = stream.length - start;
      want = Math.max(2 * rendered, (1.25 * rendered * SHOWN_TAIL_BYTES) / Math.max(1, Buffer.byteLength(text)));
    }
    return undefined;
  }

  /**
   * The start of the read, through this decoder's own state (it continues the previous read), line
   * by line until it holds Codex's head or reaches `upTo`, the start of the rendered end. The
   * rendering is on a copy: what it holds back at the cut is dropped with the rest of the middle.
   */
  private renderStart(output: RetainedOutput, upTo: Buffer): { text: string; rawBytes: number } {
    const terminal = this.terminal.clone();
    const step = CODEX_HALF_BYTES + 4096;
    const pieces = output.omittedBytes > 0 ? [output.head, omissionMarker(output.omittedBytes), upTo] : [upTo];
    let text = "";
    let rawBytes = 0;
    for (const piece of pieces) {
      if (typeof piece === "string") {
        text += terminal.write(piece, false);
        rawBytes += Buffer.byteLength(piece);
        continue;
      }
      for (let at = 0; at < piece.length; ) {
        // Codex's head is counted after its omission line replaces ours, which is longer.
        if (Buffer.byteLength(text) >= CODEX_HALF_BYTES + 1024) return { text, rawBytes };
        const end = lineEndAfter(piece, at + step);
        text += terminal.write(this.utf8.decode(piece.subarray(at, end), { stream: true }), false);
        rawBytes += end - at;
        at = end;
      }
      // The head ends at the gap: flush what it left open, as a whole decode does.
      if (piece === output.head && output.omittedBytes > 0) text += terminal.write(this.utf8.decode(), false);
    }
    return { text, rawBytes };
  }
}
