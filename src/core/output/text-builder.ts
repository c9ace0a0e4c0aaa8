/**
 * The output of one rendering pass, without a string per piece (between dense controls a piece may be
 * one character): short pieces are copied as UTF-16 code units into a buffer, long ones kept as
 * strings, and the builder knows where the current line starts, so a line a lone CR starts to redraw
 * moves out in time proportional to the line.
 */
import { endianness } from "node:os";

const LF = 0x0a;
const CAPACITY = 16 * 1024;
/** Up to this many code units, `String.fromCharCode` is cheaper than a decoder call. */
const SMALL = 64;

/** A Uint16Array holds code units in the machine's byte order. */
const utf16 = new TextDecoder(endianness() === "LE" ? "utf-16le" : "utf-16be");

/** Sink for a line's code units: where the cells of a redrawn line end up. */
export interface CodeUnitSink {
  write(source: string, start: number, end: number): unknown;
  writeUnits(units: Uint16Array, start: number, end: number): void;
}

export class TextBuilder {
  /** Finished output before the current line. */
  private done = "";
  /** The start of the current line when it did not stay in the buffer (then `lineStart` is 0). */
  private lineHead = "";
  private readonly units = new Uint16Array(CAPACITY);
  private count = 0;
  /** Where the current line starts in `units`: everything before it is finished lines. */
  private lineStart = 0;

  /** Appends `source[start, end)`, a piece short enough to copy. */
  appendShort(source: string, start: number, end: number): void {
    if (this.count + (end - start) > CAPACITY) this.makeRoom(end - start);
    const units = this.units;
    let count = this.count;
    for (let k = start; k < end; k++) {
      const c = source.charCodeAt(k);
      units[count++] = c;
      if (c === LF) this.lineStart = count;
    }
    this.count = count;
    if (this.lineHead && this.lineStart > 0) this.closeHead();
  }

  /** Appends code units that hold no LF (a redrawn line). */
  appendUnits(source: Uint16Array, start: number, end: number): void {
    if (end - start > CAPACITY / 2) {
      this.spillLine();
      this.lineHead += utf16.decode(source.subarray(start, end));
      return;
    }
    if (this.count + (end - start) > CAPACITY) this.makeRoom(end - start);
    if (end - start > SMALL) this.units.set(source.subarray(start, end), this.count);
    else for (let k = start, to = this.count; k < end; k++, to++) this.units[to] = source[k]!; // no view object for a short line
    this.count += end - start;
  }

  /** Appends the code points `cells[0, length)` (a redrawn line, no LF among them). */
  appendCodePoints(cells: Int32Array, length: number): void {
    if (length > CAPACITY / 4) {
      this.spillLine();
      for (let j = 0; j < length; j += 4096) this.lineHead += String.fromCodePoint(...cells.subarray(j, Math.min(length, j + 4096)));
      return;
    }
    if (this.count + 2 * length > CAPACITY) this.makeRoom(2 * length);
    const units = this.units;
    let count = this.count;
    for (let j = 0; j < length; j++) {
      const cp = cells[j]!;
      if (cp > 0xffff) {
        units[count++] = 0xd800 + ((cp - 0x10000) >> 10);
        units[count++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      } else units[count++] = cp;
    }
    this.count = count;
  }

  /** Appends `source[start, end)`, whose last LF is at `lastLf` (-1 when it has none). */
  appendLong(source: string, start: number, end: number, lastLf: number): void {
    if (lastLf < start) {
      this.spillLine();
      this.lineHead += source.slice(start, end);
      return;
    }
    this.done += this.lineHead + this.decode(0, this.count) + source.slice(start, lastLf + 1);
    this.count = 0;
    this.lineStart = 0;
    this.lineHead = source.slice(lastLf + 1, end);
  }

  /** Moves the current line into `sink` (it is being redrawn); the builder goes on with an empty line. */
  moveLineTo(sink: CodeUnitSink): void {
    if (this.lineHead) sink.write(this.lineHead, 0, this.lineHead.length);
    sink.writeUnits(this.units, this.lineStart, this.count);
    this.lineHead = "";
    this.count = this.lineStart;
  }

  /** Takes the current, unfinished line out as a string; the builder goes on with an empty line. */
  takeLine(): string {
    const line = this.lineHead + this.decode(this.lineStart, this.count);
    this.lineHead = "";
    this.count = this.lineStart;
    return line;
  }

  /** No LF was appended yet: the current line is the one the text began on. */
  get onFirstLine(): boolean {
    return this.done === "" && this.lineStart === 0;
  }

  /** Everything appended, as one string. */
  result(): string {
    return this.done + this.lineHead + this.decode(0, this.count);
  }

  private decode(from: number, to: number): string {
    if (to - from <= 0) return "";
    const units = this.units.subarray(from, to);
    return to - from <= SMALL ? String.fromCharCode.apply(null, units as unknown as number[]) : utf16.decode(units);
  }

  /** A LF in the buffer finished a line that began before it. */
  private closeHead(): void {
    this.done += this.lineHead + this.decode(0, this.lineStart);
    this.lineHead = "";
    this.shiftLine();
  }

  /** Finished lines in the buffer go out; the current line moves to its front, or out as well if it fills it. */
  private makeRoom(needed: number): void {
    if (this.lineStart > 0) {
      this.done += this.decode(0, this.lineStart);
      this.shiftLine();
    }
    if (this.count + needed > CAPACITY) {
      this.lineHead += this.decode(0, this.count);
      this.count = 0;
    }
  }

  /** Everything in the buffer leaves it: finished lines to `done`, the current line to `lineHead`. */
  private spillLine(): void {
    if (this.lineStart > 0) this.done += this.decode(0, this.lineStart);
    this.lineHead += this.decode(this.lineStart, this.count);
    this.count = 0;
    this.lineStart = 0;
  }

  private shiftLine(): void {
    this.units.copyWithin(0, this.lineStart, this.count);
    this.count -= this.lineStart;
    this.lineStart = 0;
  }
}
