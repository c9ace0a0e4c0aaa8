/**
 * Terminal control handling for text shown to the model or drawn in the UI. It works on decoded code
 * points, never on raw bytes: a byte-level filter would cut a UTF-8 character whose continuation byte
 * falls in the C1 range (0x80–0x9F). The raw bytes stay untouched in the log.
 */

const ESC = 0x1b;
const BEL = 0x07;
const CR = 0x0d;
const TAB = 0x09;
const LF = 0x0a;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;

function isControl(code: number): boolean {
  return (code < 0x20 && code !== TAB && code !== LF) || (code >= 0x7f && code <= 0x9f);
}

/** End (exclusive) of a CSI whose parameters start at `i`, or -1 when malformed or cut short. */
function csiEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c >= 0x40 && c <= 0x7e) return j + 1; // final byte
    if (c < 0x20 || c > 0x3f) return -1; // not a parameter or intermediate byte
    j++;
  }
  return -1;
}

/**
 * End (exclusive) of a control string (OSC, DCS, SOS, PM, APC) whose body starts at `i`: up to the
 * String Terminator (ESC \ or 0x9C), or BEL for OSC as xterm accepts. -1 when unterminated.
 */
function stringEnd(text: string, i: number, allowBel: boolean): number {
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === C1_ST || (allowBel && c === BEL)) return j + 1;
    if (c === ESC && text.charCodeAt(j + 1) === 0x5c) return j + 2;
  }
  return -1;
}

/**
 * Length of the control sequence at `i` (which holds ESC or a C1 introducer), or 0 when it is just a
 * lone control character. Malformed or unterminated sequences count only their introducer, so a stray
 * ESC in output never swallows the text after it.
 */
function sequenceLength(text: string, i: number): number {
  const c = text.charCodeAt(i);
  let kind: "csi" | "osc" | "string" | undefined;
  let bodyStart = i + 1;
  if (c === ESC) {
    const next = text.charCodeAt(i + 1);
    bodyStart = i + 2;
    if (next === 0x5b) kind = "csi"; // [
    else if (next === 0x5d) kind = "osc"; // ]
    else if (next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f) kind = "string"; // P X ^ _
    else if (next >= 0x20 && next <= 0x2f) {
      // nF escape: intermediates, then one final byte (e.g. ESC ( B selects a charset).
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
      const final = text.charCodeAt(j);
      return final >= 0x30 && final <= 0x7e ? j + 1 - i : j - i;
    } else if (next >= 0x30 && next <= 0x7e) return 2; // two-character escape (ESC 7, ESC =, ESC c)
    else return 1;
  } else if (c === C1_CSI) kind = "csi";
  else if (c === C1_OSC) kind = "osc";
  else if (c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) kind = "string";
  else return 0;

  const end = kind === "csi" ? csiEnd(text, bodyStart) : stringEnd(text, bodyStart, kind === "osc");
  return end === -1 ? bodyStart - i : end - i;
}

/** Any control character the stripper acts on (TAB and LF are kept). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Removes terminal control sequences (CSI, OSC, DCS and the other control strings, plain escapes) and
 * every C0/C1 control character except TAB and LF. CR goes too, which turns CRLF line ends into LF.
 * The search for the next control character is a native regex scan: a megabyte of plain output costs
 * about a millisecond rather than a JavaScript loop over every character.
 */
export function stripControlSequences(text: string): string {
  CONTROL.lastIndex = 0;
  let match = CONTROL.exec(text);
  if (!match) return text;
  let out = "";
  let copyFrom = 0;
  while (match) {
    const i = match.index;
    out += text.slice(copyFrom, i);
    copyFrom = i + Math.max(1, sequenceLength(text, i));
    CONTROL.lastIndex = copyFrom;
    match = CONTROL.exec(text);
  }
  return out + text.slice(copyFrom);
}

/** Longest control sequence held back at the end of one read to be completed by the next. */
const MAX_HELD_SEQUENCE = 4096;

/** True when the sequence starting at `i` is cut off by the end of `text` (not malformed, not complete). */
function reachesEndUnfinished(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  let bodyStart = i + 1;
  let kind: "csi" | "osc" | "string" | "nf";
  if (c === ESC) {
    if (i + 1 >= text.length) return true;
    const next = text.charCodeAt(i + 1);
    bodyStart = i + 2;
    if (next === 0x5b) kind = "csi";
    else if (next === 0x5d) kind = "osc";
    else if (next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f) kind = "string";
    else if (next >= 0x20 && next <= 0x2f) kind = "nf";
    else return false;
  } else if (c === C1_CSI) kind = "csi";
  else if (c === C1_OSC) kind = "osc";
  else if (c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) kind = "string";
  else return false;
  if (kind === "osc" || kind === "string") return stringEnd(text, bodyStart, kind === "osc") === -1;
  // CSI: parameters and intermediates (0x20–0x3F) up to the end; nF: intermediates (0x20–0x2F).
  const max = kind === "csi" ? 0x3f : 0x2f;
  for (let j = bodyStart; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d < 0x20 || d > max) return false;
  }
  return true;
}

/**
 * Where an unfinished control sequence starts at the very end of `text` (a lone ESC, a CSI still
 * reading parameters, an OSC or DCS without its terminator), or -1. Output is read in chunks, so a
 * colour code can be split between two reads; the caller holds the start back until the rest comes,
 * instead of showing its parameters as text. Only the last {@link MAX_HELD_SEQUENCE} characters count.
 */
export function unfinishedSequenceStart(text: string): number {
  for (let i = Math.max(0, text.length - MAX_HELD_SEQUENCE); i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c !== ESC && !(c >= C1_DCS && c <= C1_APC)) {
      i++;
      continue;
    }
    if (reachesEndUnfinished(text, i)) return i;
    i += Math.max(1, sequenceLength(text, i));
  }
  return -1;
}

/** True for the erase-in-line sequences a progress bar uses: ESC[K, ESC[0K, ESC[1K, ESC[2K. */
function eraseInLine(sequence: string): 0 | 1 | 2 | undefined {
  const match = /^(?:\x1b\[|\u009b)([012]?)K$/.exec(sequence);
  if (!match) return undefined;
  return Number(match[1] || 0) as 0 | 1 | 2;
}

/**
 * One line as a terminal would finally show it: CR returns to column 0 and later characters
 * overwrite earlier ones; erase-in-line clears; every other control is dropped.
 */
function renderLine(line: string): string {
  const cells: string[] = [];
  let col = 0;
  for (let i = 0; i < line.length; ) {
    const c = line.charCodeAt(i);
    if (c === CR) {
      col = 0;
      i++;
      continue;
    }
    if (isControl(c)) {
      const length = Math.max(1, sequenceLength(line, i));
      const erase = eraseInLine(line.slice(i, i + length));
      if (erase === 0) cells.length = Math.min(cells.length, col);
      else if (erase === 2) cells.length = 0;
      else if (erase === 1) for (let j = 0; j <= col && j < cells.length; j++) cells[j] = " ";
      i += length;
      continue;
    }
    const char = String.fromCodePoint(line.codePointAt(i)!);
    while (cells.length < col) cells.push(" ");
    cells[col++] = char;
    i += char.length;
  }
  return cells.join("");
}

/**
 * Text for the model: each line reduced to what a terminal would finally show (a progress bar
 * redrawn a thousand times with CR becomes its last state; CRLF becomes LF), then every control
 * sequence and control character except TAB and LF removed.
 */
export function renderTerminalText(text: string): string {
  // Without a CR the cursor never moves back, so erasing and overwriting change nothing.
  if (!text.includes("\r")) return stripControlSequences(text);
  return text
    .split("\n")
    .map((line) => (line.includes("\r") ? renderLine(line) : stripControlSequences(line)))
    .join("\n");
}
