/**
 * Terminal output as the text a terminal would finally show of each line, on decoded code points (a
 * byte filter would cut a character whose continuation byte is in the C1 range): control sequences
 * and controls (but TAB and LF) removed, lines redrawn in place (line-cells.ts), invisible characters
 * made visible. One linear pass: each sequence is parsed once, for at most its bound.
 */
import { LineCells } from "./line-cells.ts";
import { TextBuilder } from "./text-builder.ts";
import { codePointBefore, codePointName, isInvisible, joinsEmoji, SPECIAL_IN_TEXT, SPECIAL_UNITS } from "./visible-text.ts";

const BEL = 0x07;
const BS = 0x08;
const LF = 0x0a;
const CR = 0x0d;
const CAN = 0x18;
const SUB = 0x1a;
const ESC = 0x1b;
const BACKSLASH = 0x5c;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;
const ZWJ = 0x200d;

/**
 * Longest body (characters after the introducer) of a control sequence or string that is swallowed,
 * or held back at the end of a read for the next to complete: room for a long hyperlink, an OSC 52
 * copy of a page or a kitty-graphics chunk, while a stray introducer delays at most this much text.
 * Longer or unterminated, the introducer is dropped and the body is shown as text.
 */
export const MAX_CONTROL_SEQUENCE_CHARS = 16 * 1024;

// Local bindings: a module loader that compiles imports to property getters (tsx, jiti) would
// otherwise call a getter for every character of the hot loop.
const SPECIAL = SPECIAL_IN_TEXT;
const UNITS = SPECIAL_UNITS;
const MAX_CHARS = MAX_CONTROL_SEQUENCE_CHARS;

/** Returned by a parser instead of an index: the text ends inside this sequence; hold it for the next read. */
const HOLD = -1;

/** True for a code unit the plain-text scan stops at (see {@link SPECIAL_IN_TEXT}). */
function isSpecial(code: number): boolean {
  return UNITS[code] === 1;
}

/** Plain runs shorter than this are scanned in JavaScript: between dense controls a regex call costs more. */
const SHORT_RUN = 32;

/** Index of the first special character at or after `from`, or the text's length. */
function nextSpecial(text: string, from: number): number {
  const short = Math.min(text.length, from + SHORT_RUN);
  for (let k = from; k < short; k++) if (isSpecial(text.charCodeAt(k))) return k;
  if (short >= text.length) return text.length;
  SPECIAL.lastIndex = short;
  const match = SPECIAL.exec(text);
  return match ? match.index : text.length;
}

/** One pass over one read's text. */
class Pass {
  /** The output so far (a line being redrawn is in `cells` until it ends). */
  private readonly out = new TextBuilder();
  /** A LF of the text at or after the current position, or -1 when not looked for yet. */
  private nextLf = -1;
  /** The current line since its first lone CR, when it has one. */
  private cells: LineCells | undefined;
  /** Cells no longer in use (read by {@link renderCarryingLine} for the next pass). */
  spareCells: LineCells | undefined;
  /** The line the text began on was redrawn (it may hide what earlier text put on that line). */
  redrewFirstLine = false;

  constructor(
    private readonly text: string,
    private readonly final: boolean,
    /** The code point before `text` (the previous read's last), for the emoji joiner rule. */
    private readonly before: number | undefined,
    /** The unfinished line a previous pass left (see {@link renderCarryingLine}). */
    carried?: CarriedLine,
    spare?: LineCells,
  ) {
    if (typeof carried !== "string") this.cells = carried;
    else if (carried) this.out.appendLong(carried, 0, carried.length, -1);
    this.spareCells = spare;
  }

  /** Takes the unfinished last line out of the output ("" when the text ended at a line start). */
  takeLine(): CarriedLine {
    const { cells } = this;
    this.cells = undefined;
    return cells ?? this.out.takeLine();
  }

  /** Renders the whole text; returns where an unfinished sequence that must be held back starts, or -1. */
  run(): number {
    const { text } = this;
    const n = text.length;
    let i = 0;
    while (i < n) {
      let j = i;
      if (!isSpecial(text.charCodeAt(i))) {
        j = this.cells ? this.redrawnText(i) : this.plainText(i);
        if (j >= n) break;
      }
      const next = this.special(j);
      if (next === HOLD) return j;
      i = next;
    }
    return -1;
  }

  result(): string {
    this.cells?.render(this.out);
    return this.out.result();
  }

  /** Handles the special character at `j`; returns where the text goes on, or {@link HOLD}. */
  private special(j: number): number {
    const c = this.text.charCodeAt(j);
    if (c === ESC) return this.escape(j);
    if (c === CR) return this.carriageReturn(j);
    if (c >= 0x80 && c <= 0x9f) return this.c1(j);
    if (c === BS) {
      this.redraw().moveBy(1);
      return j + 1;
    }
    if (c < 0x20 || c === 0x7f) return j + 1; // any other control: dropped
    return this.invisible(j);
  }

  private escape(j: number): number {
    const { text } = this;
    if (j + 1 >= text.length) return this.unfinished(j + 1);
    const next = text.charCodeAt(j + 1);
    if (next === 0x5b) return this.csi(j + 2); // [
    if (next === 0x5d) return this.controlString(j + 2, true); // ]
    if (next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f) return this.controlString(j + 2, false); // P X ^ _
    if (next >= 0x20 && next <= 0x2f) return this.nF(j);
    if (next >= 0x30 && next <= 0x7e) return j + 2; // a two-character escape (ESC 7, ESC =, ESC c, a lone ST)
    return j + 1; // ESC before a character that cannot follow it: only the ESC goes
  }

  private c1(j: number): number {
    const c = this.text.charCodeAt(j);
    if (c === C1_CSI) return this.csi(j + 1);
    if (c === C1_OSC) return this.controlString(j + 1, true);
    if (c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) return this.controlString(j + 1, false);
    return j + 1;
  }

  /**
   * The text ends inside a sequence whose body starts at `body`: hold it back for the next read to
   * complete, or, when nothing more will come, drop only its introducer and go on with the body as text.
   */
  private unfinished(body: number): number {
    return this.final ? body : HOLD;
  }

  /** CSI parameters and intermediates (0x20–0x3F) up to a final byte (0x40–0x7E). */
  private csi(body: number): number {
    const { text } = this;
    const last = body + MAX_CHARS; // past the bound, only the final byte may stand
    for (let k = body; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c >= 0x40 && c <= 0x7e) {
        if (c === 0x47 || c === 0x43 || c === 0x44 || c === 0x4b || c === 0x4a) this.lineEdit(body, k, c); // G C D K J
        return k + 1;
      }
      if (c < 0x20 || c > 0x3f || k === last) return body; // malformed or too long: the introducer goes, the rest is text
    }
    return this.unfinished(body);
  }

  /**
   * What moves the cursor within the line or erases part of it: `CSI n G` (to column n), `CSI n C`
   * and `CSI n D` (n right, left), `CSI 0K`/`1K`/`2K` (erase in line) and `CSI 0J` (erase below:
   * here, the rest of the line). An erase after the cursor on a line not being redrawn erases nothing.
   */
  private lineEdit(body: number, final: number, c: number): void {
    if (c === 0x4a && !this.cells) return; // below a cursor at the line's end, nothing to erase
    let n = 0;
    for (let k = body; k < final; k++) {
      const digit = this.text.charCodeAt(k) - 0x30;
      if (digit < 0 || digit > 9) return; // a private or a second parameter: not one of these
      if (n < 1_000_000) n = n * 10 + digit;
    }
    if (c === 0x4b || c === 0x4a) {
      if (n > 2 || (c === 0x4a && n !== 0) || (n === 0 && !this.cells)) return;
      this.redraw().erase(n as 0 | 1 | 2);
      return;
    }
    const steps = Math.max(1, n);
    if (c === 0x47) this.redraw().moveTo(steps - 1);
    else this.redraw().moveBy(c === 0x44 ? steps : -steps);
  }

  /**
   * The body of OSC (ended by ST or BEL) or DCS, SOS, PM, APC (ended by ST). Any other ESC, CAN, SUB
   * or C1 control abandons the string, as in a terminal; an abandoned string is shown as text.
   */
  private controlString(body: number, osc: boolean): number {
    const { text } = this;
    const n = text.length;
    const last = body + MAX_CHARS; // past the bound, only a terminator may stand
    for (let k = body; k < n; k++) {
      const c = text.charCodeAt(k);
      if (c === ESC) {
        if (k + 1 >= n) return this.unfinished(body); // perhaps the first half of ST
        return text.charCodeAt(k + 1) === BACKSLASH ? k + 2 : body;
      }
      if (c === C1_ST || (c === BEL && osc)) return k + 1;
      if (c === CAN || c === SUB || (c >= 0x80 && c <= 0x9f) || k === last) return body;
    }
    return this.unfinished(body);
  }

  /** ESC, intermediates (0x20–0x2F), one final byte (0x30–0x7E): ESC ( B selects a character set. */
  private nF(j: number): number {
    const { text } = this;
    const last = j + 1 + MAX_CHARS;
    for (let k = j + 1; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c >= 0x30 && c <= 0x7e) return k + 1;
      if (c < 0x20 || c > 0x2f || k === last) return j + 1;
    }
    return this.unfinished(j + 1);
  }

  /**
   * CR before LF is part of the line end. A lone CR returns to column 0 (see {@link redraw}). A run
   * of CRs is taken at once: each but the last is lone, and returning to column 0 twice is once.
   */
  private carriageReturn(j: number): number {
    const { text } = this;
    const n = text.length;
    let k = j + 1;
    while (k < n && text.charCodeAt(k) === CR) k++;
    if (k === j + 1 && (k >= n || text.charCodeAt(k) === LF)) return k;
    this.redraw().moveTo(0);
    return k;
  }

  /**
   * The current line as cells, where later characters overwrite earlier ones and erases apply: from
   * its first redraw on, until its LF, the line is kept so (moved in as written so far, once).
   */
  private redraw(): LineCells {
    if (this.cells) return this.cells;
    if (this.out.onFirstLine) this.redrewFirstLine = true;
    const cells = this.spareCells ?? new LineCells();
    cells.reset();
    this.out.moveLineTo(cells);
    this.cells = cells;
    return cells;
  }

  private invisible(j: number): number {
    const { text } = this;
    const cp = text.codePointAt(j)!;
    const length = cp > 0xffff ? 2 : 1;
    if (!isInvisible(cp) || (cp === ZWJ && joinsEmoji(j === 0 ? this.before : codePointBefore(text, j)))) this.plain(j, j + length);
    else this.visible(codePointName(cp));
    return j + length;
  }

  /** The plain text from `start` to the next special character, copied out; returns where it ends. */
  private plainText(start: number): number {
    const end = nextSpecial(this.text, start + 1);
    this.append(start, end);
    return end;
  }

  /**
   * The plain text from `start` on a line being redrawn, into the cells as it is scanned, up to the
   * next special character; a LF finishes the line, and the rest of the text goes out as it is.
   * Returns where the plain text ends.
   */
  private redrawnText(start: number): number {
    const { text } = this;
    const stop = this.cells!.writeText(text, start, text.length, UNITS);
    if (stop >= text.length || text.charCodeAt(stop) !== LF) return stop;
    this.cells!.render(this.out);
    this.spareCells = this.cells;
    this.cells = undefined;
    return this.plainText(stop);
  }

  /** Plain text `text[start, end)`. */
  private plain(start: number, end: number): void {
    if (start === end) return;
    if (this.cells) {
      this.lineText(start, end);
      return;
    }
    this.append(start, end);
  }

  /** Text that is not in the input (`<U+202E>`). */
  private visible(text: string): void {
    if (this.cells) this.cells.write(text, 0, text.length);
    else this.out.appendShort(text, 0, text.length);
  }

  /** Plain text on a line being redrawn: into the cells up to a LF, which finishes the line. */
  private lineText(start: number, end: number): void {
    const lf = this.cells!.write(this.text, start, end);
    if (lf === -1) return;
    this.cells!.render(this.out);
    this.spareCells = this.cells;
    this.cells = undefined;
    this.append(lf, end);
  }

  /**
   * Copies plain text out. The builder must know where the current line starts (a lone CR may still
   * redraw it): a short run is copied unit by unit, which finds its LFs on the way; a long one is
   * kept as a string, with its last LF found here. That stays linear: the forward search for a LF
   * starts only past the previous one found, and the backward search stops at the LF known to be in
   * the run.
   */
  private append(start: number, end: number): void {
    if (end - start <= SHORT_RUN) {
      this.out.appendShort(this.text, start, end);
      return;
    }
    const { text } = this;
    if (this.nextLf < start) {
      this.nextLf = text.indexOf("\n", start);
      if (this.nextLf === -1) this.nextLf = text.length;
    }
    if (this.nextLf >= end) {
      this.out.appendLong(text, start, end, -1);
      return;
    }
    this.out.appendLong(text, start, end, text.lastIndexOf("\n", end - 1));
    this.nextLf = -1;
  }
}

/**
 * Renders one job's output as it arrives in reads: a control sequence cut by the end of a read
 * (at most {@link MAX_CONTROL_SEQUENCE_CHARS} long) is held back and completed by the next read.
 * Each read's lines are rendered on their own: a line redrawn across two reads shows its state at
 * the end of the first in the first.
 */
export class TerminalText {
  private held = "";
  private last: number | undefined;
  /** The last write redrew the line it began on: its first line replaces what the previous write left there. */
  redrewFirstLine = false;

  /** Whether the end of an unfinished control sequence is held back for the next write. */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** The start of an unfinished control sequence held back for the next write ("" when none). */
  get heldText(): string {
    return this.held;
  }

  /** A renderer in the same state: what this one holds back, and the code point before it. */
  clone(): TerminalText {
    const copy = new TerminalText();
    copy.held = this.held;
    copy.last = this.last;
    return copy;
  }

  /** Text of `input`; `final` when nothing more will follow (whatever is held is flushed as text). */
  write(input: string, final: boolean): string {
    const text = this.held ? this.held + input : input;
    this.held = "";
    this.redrewFirstLine = false;
    SPECIAL.lastIndex = 0;
    if (!SPECIAL.test(text)) {
      this.last = codePointBefore(text, text.length) ?? this.last;
      return text;
    }
    const pass = new Pass(text, final, this.last);
    const heldFrom = pass.run();
    const end = heldFrom === -1 ? text.length : heldFrom;
    if (heldFrom !== -1) this.held = text.slice(heldFrom);
    this.last = codePointBefore(text, end) ?? this.last;
    this.redrewFirstLine = pass.redrewFirstLine;
    return pass.result();
  }
}

/**
 * An unfinished line carried from one pass to the next: its text while no lone CR has touched it,
 * its cells (with the cursor where the output left it) once one has, so erases and redraws go on
 * applying to it exactly as in one pass over all of the text.
 */
export type CarriedLine = string | LineCells;

/**
 * One pass for a reader that tests whole lines as they arrive (line-stream.ts): `carried`, the
 * unfinished line the previous pass left, goes on as it was, so a CR in this text redraws it. Gives
 * back the complete lines (`text`), where a sequence to hold back starts (`heldFrom`, or -1), the
 * unfinished line this text leaves (`line`, "" at a line start) and cells to reuse (`spare`).
 */
export function renderCarryingLine(text: string, before: number | undefined, carried: CarriedLine, spare: LineCells | undefined) {
  const pass = new Pass(text, false, before, carried, spare);
  const heldFrom = pass.run();
  const line = pass.takeLine();
  return { text: pass.result(), heldFrom, line, spare: pass.spareCells };
}

/**
 * Text as a terminal would finally show it, for text complete in itself: each line reduced to its
 * final state (a progress bar redrawn a thousand times with CR becomes its last state; CRLF becomes
 * LF), every control sequence and control character except TAB and LF removed, invisible characters
 * shown as `<U+XXXX>`.
 */
export function renderTerminalText(text: string): string {
  return new TerminalText().write(text, true);
}
