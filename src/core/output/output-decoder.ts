/*
 * output/ — a job's bytes as the text the model and the TUI read: retention between reads
 * (head-tail-buffer), the streaming decode (this file), terminal control stripped and invisible
 * characters made visible (terminal-text, line-cells, text-builder, visible-text), what a result can
 * show of a read (shown-part) and what the job printed for the honest footer (printed-tally).
 *
 * May import: shared.
 */
import { PARTIAL_DECODE_MIN_SKIP_BYTES } from "../shared/constants.ts";
import { omissionMarker, type RetainedOutput } from "./head-tail-buffer.ts";
import { type Elision, exceedsTail, originAfter, originPastGap, partStart, type ShownPart, type StreamOrigin } from "./shown-part.ts";
import { TerminalText } from "./terminal-text.ts";

/** Bytes 0x80–0xBF continue a UTF-8 character; a tail cut by retention may start with some. */
export function continuationPrefix(bytes: Buffer): number {
  let n = 0;
  while (n < bytes.length && n < 3 && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}

/** A read's text; `elided` says where a middle the result cannot show was left undecoded. */
export interface DecodedText {
  text: string;
  elided?: Elision;
  /** The read redrew the line the previous read ended on (a spinner's next frame): its first line replaces that line. */
  redrewLine?: boolean;
}

/** The end of a read, rendered from a start found in shown-part.ts on, by decoders of its own. */
interface RenderedEnd {
  /** Where in its bytes the rendered end starts. */
  start: number;
  text: string;
  utf8: ReturnType<typeof newUtf8>;
  terminal: TerminalText;
}

/** The start of a read as far as it was rendered, and the raw bytes that took. */
interface RenderedStart {
  text: string;
  rawBytes: number;
}

const newUtf8 = () => new TextDecoder("utf-8", { ignoreBOM: true });

/** LFs in `text`. */
function lineCount(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/**
 * How many times more of the read the next try renders, when a part's text fell short of the cap:
 * enough, at the rate this part's text grew, to pass it by a margin, and at least twice as much. A
 * part with no text (every byte a control) asks for more than the read has, so the read is rendered
 * whole at once rather than in ever larger parts.
 */
function growth(text: string, shown: ShownPart): number {
  let factor = shown.tailBytes / Math.max(1, Buffer.byteLength(text));
  if (Number.isFinite(shown.tailLines)) factor = Math.min(factor, shown.tailLines / Math.max(1, lineCount(text)));
  return Math.max(2, 1.25 * factor);
}

/** The first LF at or after `from`, plus one (or the end): a read's start is cut after a whole line. */
function lineEndAfter(bytes: Buffer, from: number): number {
  if (from >= bytes.length) return bytes.length;
  const lf = bytes.indexOf(0x0a, from);
  return lf === -1 ? bytes.length : lf + 1;
}

/** What the end of a read is found in: the bytes past the gap (a character the gap cut is lost, as in a whole decode), or all of them. */
function streamOf(output: RetainedOutput): Buffer {
  if (output.omittedBytes > 0) return output.tail.subarray(continuationPrefix(output.tail));
  return output.tail.length ? Buffer.concat([output.head, output.tail]) : output.head;
}

/**
 * Turns a job's output bytes into model text, one read at a time, as if the reads were one stream:
 * a UTF-8 character or a control sequence split between two reads comes out whole in the later one.
 * Where retention dropped the middle, the omission marker stands in the gap (the character cut there
 * is lost, not mangled). The text is then reduced to what a terminal would show.
 *
 * Given what the result can show ({@link ShownPart}), a large read is decoded only in part: its end
 * from a start where rendering gives the same text as a whole decode there (see shown-part.ts) and,
 * for Codex's head, its start; the streaming state then continues from the end.
 */
export class OutputDecoder {
  private utf8 = newUtf8();
  /** Terminal rendering, with the start of a control sequence the previous read ended in. */
  private terminal = new TerminalText();
  /** The previous read ended in C2, held by `utf8`: the next read may complete a C1 control with it. */
  private c1LeadHeld = false;

  /** Text of `output`; `final` when the job has ended and nothing more will follow; `shown` lets a large read be decoded in part. */
  take(output: RetainedOutput, final: boolean, shown?: ShownPart): DecodedText {
    const decoded = (shown && this.takePart(output, final, shown)) || {
      text: this.takeAll(output, final),
      redrewLine: this.terminal.redrewFirstLine,
    };
    const { head, tail, omittedBytes } = output;
    // Past a gap the head was flushed: only the tail can leave a byte held.
    const last = omittedBytes > 0 || tail.length > 0 ? tail.at(-1) : head.at(-1);
    if (head.length + tail.length > 0 || omittedBytes > 0) this.c1LeadHeld = !final && last === 0xc2;
    return decoded;
  }

  private takeAll(output: RetainedOutput, final: boolean): string {
    let text = "";
    if (output.omittedBytes > 0) {
      // No stream: the gap ends whatever the head left open.
      text = `${this.utf8.decode(output.head)}${omissionMarker(output.omittedBytes)}`;
    }
    text += this.decode(streamOf(output), final);
    return this.terminal.write(text, final);
  }

  private decode(bytes: Buffer, final: boolean): string {
    return this.utf8.decode(bytes, { stream: !final });
  }

  /** The read's shown parts only, or undefined when too little of it could be skipped. */
  private takePart(output: RetainedOutput, final: boolean, shown: ShownPart): DecodedText | undefined {
    const gap = output.omittedBytes > 0;
    const retained = output.head.length + output.tail.length;
    if (retained < shown.headBytes + shown.tailBytes + PARTIAL_DECODE_MIN_SKIP_BYTES) return undefined;
    const stream = streamOf(output);
    const end = this.renderEnd(stream, final, shown, this.originOf(output), gap);
    if (!end) return undefined;
    const start =
      shown.headBytes > 0 ? this.renderStart(output, stream.subarray(0, end.start), shown.headBytes) : { text: "", rawBytes: 0 };
    this.utf8 = end.utf8;
    this.terminal = end.terminal;
    // Left out: what lies between the start as rendered and the end (past a gap: the head and the marker too).
    const beforeEnd = (gap ? output.head.length + Buffer.byteLength(omissionMarker(output.omittedBytes)) : 0) + end.start;
    const bytes = beforeEnd - start.rawBytes;
    return { text: start.text + end.text, ...(bytes > 0 ? { elided: { at: start.text.length, bytes } } : {}) };
  }

  /**
   * What the renderer holds where `streamOf(output)` begins: this decoder's held sequence (a CR in it
   * would be shown if the sequence is abandoned), or past a gap, a control string the head may leave
   * open across the omission marker.
   */
  private originOf(output: RetainedOutput): StreamOrigin {
    const afterHeld = originAfter(this.terminal.heldText, this.c1LeadHeld);
    return output.omittedBytes > 0 ? originPastGap(output.head, afterHeld) : afterHeld;
  }

  /**
   * The end of `stream` rendered from the latest start that gives more text than the result keeps.
   * Without a gap, at least {@link PARTIAL_DECODE_MIN_SKIP_BYTES} must be skippable; past a gap, the
   * head already is. A part that falls short is tried again, longer (at most from the floor), unless
   * its text says even all of the read would not be enough by far.
   */
  private renderEnd(stream: Buffer, final: boolean, shown: ShownPart, origin: StreamOrigin, gap: boolean): RenderedEnd | undefined {
    const floor = gap ? 0 : PARTIAL_DECODE_MIN_SKIP_BYTES;
    // Plain text renders to about its own size; controls and CR redraws shrink it, so a short end grows.
    let want = Math.ceil(shown.tailBytes * 1.25) + 4096;
    for (;;) {
      const limit = stream.length - want;
      const start = partStart(stream, Math.max(limit, floor), floor, origin);
      if (start === -1) return undefined;
      const utf8 = newUtf8();
      const terminal = new TerminalText();
      const text = terminal.write(utf8.decode(stream.subarray(start), { stream: !final }), final);
      if (exceedsTail(text, shown)) return { start, text, utf8, terminal };
      if (limit <= floor) return undefined;
      want = (stream.length - start) * growth(text, shown);
      if (want > 2 * (stream.length - floor)) return undefined;
    }
  }

  /**
   * The start of the read, through this decoder's own state (it continues the previous read), line
   * by line until it holds `headBytes` of text or reaches `upTo`, the start of the rendered end. The
   * rendering is on a copy: what it holds back at the cut is dropped with the rest of the middle.
   */
  private renderStart(output: RetainedOutput, upTo: Buffer, headBytes: number): RenderedStart {
    const terminal = this.terminal.clone();
    const step = Math.ceil(headBytes * 1.25) + 4096;
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
        if (Buffer.byteLength(text) >= headBytes) return { text, rawBytes };
        const end = lineEndAfter(piece, at + step);
        text += terminal.write(this.utf8.decode(piece.subarray(at, end), { stream: true }), false);
        rawBytes += end - at;
        at = end;
      }
      // The head ends at the gap: flush what it left open, as a whole decode does.
      if (piece === output.head && output.omittedBytes > 0) text += terminal.write(this.utf8.decode(), false);
    }
    // Rendered up to where the end starts, which renders as the whole does from there: a control string
    // still open here was abandoned after it (else the end's text would be inside it), so its body is text.
    if (terminal.holding) text += terminal.write("", true);
    return { text, rawBytes };
  }
}
