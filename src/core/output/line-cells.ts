/**
 * One line being redrawn (after a CR, a backspace, a cursor move or an erase) as the cells a terminal
 * shows: one code point a cell, later characters over earlier ones, skipped cells blank. Each
 * operation is O(1) amortized: an erase is recorded with its time, not applied, and the line is
 * resolved once when it ends (a cell shows its character if written after every erase covering it).
 */

const BLANK = 0x20;
/** No code unit stops {@link LineCells.writeText} but a LF. */
const NO_STOPS = new Uint8Array(0x10000);

/**
 * The furthest cell a cursor move reaches past the written line, 0-based: the last column of a job's
 * default terminal (120 wide). A short sequence then adds at most that many blank cells to a line.
 */
const MAX_COLUMN = 119;

/** Erases of one kind still able to matter: columns and times, oldest at index 0. */
class EraseStack {
  cols: number[] = [];
  times: number[] = [];

  /**
   * Records an erase at `col`, dropping the older ones it dominates: those at a column on the same
   * side (`toStart`: at or before `col`, else at or after it), which it covers and outlives.
   */
  push(col: number, time: number, toStart: boolean): void {
    const { cols, times } = this;
    while (cols.length && (toStart ? cols[cols.length - 1]! <= col : cols[cols.length - 1]! >= col)) {
      cols.pop();
      times.pop();
    }
    cols.push(col);
    times.push(time);
  }

  clear(): void {
    if (this.cols.length) {
      this.cols = [];
      this.times = [];
    }
  }
}

export class LineCells {
  private chars = new Int32Array(256);
  private stamps = new Uint32Array(256);
  /** Code units of the rendered line. */
  private out = new Uint16Array(512);
  private length = 0;
  private col = 0;
  private time = 0;
  /** `ESC[1K`: columns strictly decreasing from the oldest to the newest. */
  private readonly toStart = new EraseStack();
  /** `ESC[0K` and `ESC[2K` (from column 0): columns strictly increasing from the oldest to the newest. */
  private readonly toEnd = new EraseStack();

  /** Cells the line spans (up to the rightmost one written). */
  get width(): number {
    return this.length;
  }

  /** Starts a new line: empty, cursor at column 0. */
  reset(): void {
    this.length = 0;
    this.col = 0;
    this.time = 0;
    this.toStart.clear();
    this.toEnd.clear();
  }

  /**
   * Moves the cursor to column `col` (0-based; past the written line, at most to {@link MAX_COLUMN}).
   * Cells it skips past the line are blank, never written (stamp 0): left out when they end the line.
   */
  moveTo(col: number): void {
    this.col = Math.max(0, Math.min(col, Math.max(MAX_COLUMN, this.length)));
    if (this.col <= this.length) return;
    if (this.col > this.chars.length) this.grow(this.col);
    this.chars.fill(BLANK, this.length, this.col);
    this.stamps.fill(0, this.length, this.col);
    this.length = this.col;
  }

  /** Moves the cursor `cells` left (negative: right), never past column 0. */
  moveBy(cells: number): void {
    this.moveTo(this.col - cells);
  }

  /** Writes the characters of `text` from `start` up to `end` or the first LF, whose index it returns (-1 when none). */
  write(text: string, start: number, end: number): number {
    const stop = this.writeText(text, start, end, NO_STOPS);
    return stop < end ? stop : -1;
  }

  /**
   * Writes the characters of `text` from `start` up to `end`, a LF or the first code unit that
   * `stops` marks (a control or a character to be made visible), scanning and writing in one loop;
   * returns where it stopped.
   */
  writeText(text: string, start: number, end: number, stops: Uint8Array): number {
    let k = start;
    for (;;) {
      // As far as the cells have room (a pair may take one more), then make more.
      const room = Math.min(end, k + this.chars.length - this.col - 1);
      k = this.writeRoom(text, k, room, end, stops);
      if (k >= end || k < room) return k;
      this.grow(this.col + 2);
    }
  }

  /** {@link writeText} up to `room` (a pair may end one past it), within the cells' room. */
  private writeRoom(text: string, start: number, room: number, end: number, stops: Uint8Array): number {
    const { chars, stamps } = this;
    let col = this.col;
    let time = this.time;
    let k = start;
    for (; k < room; k++) {
      let cp = text.charCodeAt(k);
      if (cp === 0x0a || stops[cp] === 1) break;
      if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < end) {
        const low = text.charCodeAt(k + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = ((cp - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
          k++;
        }
      }
      chars[col] = cp;
      stamps[col++] = ++time;
    }
    this.col = col;
    this.time = time;
    if (col > this.length) this.length = col;
    return k;
  }

  /** Writes code units (no LF among them), as {@link write} does characters. */
  writeUnits(units: Uint16Array, start: number, end: number): void {
    if (this.col + (end - start) > this.chars.length) this.grow(this.col + (end - start));
    const { chars, stamps } = this;
    let col = this.col;
    let time = this.time;
    for (let k = start; k < end; k++) {
      let cp = units[k]!;
      if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < end) {
        const low = units[k + 1]!;
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = ((cp - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
          k++;
        }
      }
      chars[col] = cp;
      stamps[col++] = ++time;
    }
    this.col = col;
    this.time = time;
    if (col > this.length) this.length = col;
  }

  /** Erase in line: 0 from the cursor to the end, 1 from the start to the cursor (inclusive), 2 all of it. */
  erase(mode: 0 | 1 | 2): void {
    const time = ++this.time;
    const col = mode === 2 ? 0 : this.col;
    if (mode === 1) this.toStart.push(col, time, true);
    else this.toEnd.push(col, time, false);
  }

  /** The line as shown, into `sink`: erased cells blank, trailing blanks left out. */
  render(sink: {
    appendUnits(units: Uint16Array, start: number, end: number): void;
    appendCodePoints(cells: Int32Array, length: number): void;
  }): void {
    const { chars, stamps, toStart, toEnd } = this;
    let length = this.length;
    while (length > 0 && stamps[length - 1] === 0) length--; // cells a cursor skipped, at the end
    if (toStart.cols.length === 0 && toEnd.cols.length === 0) {
      sink.appendCodePoints(chars, length); // the common case of a progress bar: nothing erased
      return;
    }
    if (this.out.length < 2 * length) this.out = new Uint16Array(4 * length);
    const out = this.out;
    let n = 0; // code units written
    let end = 0; // code units up to the last cell that shows a character
    let startIndex = toStart.cols.length - 1; // newest erase-to-start covering the column: the top one whose column reaches it
    let endIndex = -1; // newest erase-to-end covering the column: the top one that starts at or before it
    for (let j = 0; j < length; j++) {
      while (startIndex >= 0 && toStart.cols[startIndex]! < j) startIndex--;
      while (endIndex + 1 < toEnd.cols.length && toEnd.cols[endIndex + 1]! <= j) endIndex++;
      const erasedAt = Math.max(startIndex >= 0 ? toStart.times[startIndex]! : 0, endIndex >= 0 ? toEnd.times[endIndex]! : 0);
      if (stamps[j]! <= erasedAt) {
        out[n++] = BLANK;
        continue;
      }
      const cp = chars[j]!;
      if (cp > 0xffff) {
        out[n++] = 0xd800 + ((cp - 0x10000) >> 10);
        out[n++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      } else out[n++] = cp;
      end = n;
    }
    sink.appendUnits(out, 0, end);
  }

  /** Room for at least `cells` cells. */
  private grow(cells: number): void {
    let size = this.chars.length * 2;
    while (size < cells) size *= 2;
    const chars = new Int32Array(size);
    chars.set(this.chars);
    this.chars = chars;
    const stamps = new Uint32Array(size);
    stamps.set(this.stamps);
    this.stamps = stamps;
  }
}
