/*
 * A key the person pressed in Pi's TUI, as the bytes a classic terminal sends. Pi reports keys in the
 * kitty keyboard protocol or modifyOtherKeys (Ctrl+C as `ESC [ 99 ; 5 u`); a program on a PTY expects
 * xterm's defaults (`\x03`). Cursor keys follow the program's mode, a paste is bracketed only when it
 * asked, classic input passes unchanged, and key releases send nothing.
 */
import type { KeyModes } from "../../core/index.ts";

const ESC = "\x1b";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** Ctrl with a symbol or digit, as xterm sends it (Ctrl+@ and Ctrl+2 are NUL, Ctrl+[ is ESC, Ctrl+? is DEL). */
const CTRL_SYMBOLS: Record<string, string> = {
  "@": "\x00",
  " ": "\x00",
  "2": "\x00",
  "[": "\x1b",
  "3": "\x1b",
  "\\": "\x1c",
  "4": "\x1c",
  "]": "\x1d",
  "5": "\x1d",
  "^": "\x1e",
  "6": "\x1e",
  "~": "\x1e",
  _: "\x1f",
  "-": "\x1f",
  "7": "\x1f",
  "/": "\x1f",
  "?": "\x7f",
  "8": "\x7f",
};

/** Kitty's code points for the keypad (Unicode private use area): the characters they stand for. */
const KEYPAD: Record<number, string> = {
  57399: "0",
  57400: "1",
  57401: "2",
  57402: "3",
  57403: "4",
  57404: "5",
  57405: "6",
  57406: "7",
  57407: "8",
  57408: "9",
  57409: ".",
  57410: "/",
  57411: "*",
  57412: "-",
  57413: "+",
  57414: "\r",
  57415: "=",
};

const SHIFT = 1;
const ALT = 2;
const CTRL = 4;
/** Caps Lock and Num Lock: states, not modifiers a program sees. */
const LOCKS = 64 | 128;
/** Kitty's event type for a key release. */
const RELEASE = "3";

/** One key with modifiers (a bit mask, 0 for none) as xterm would send it; undefined for a key with no bytes. */
function encode(codePoint: number, shifted: number | undefined, modifiers: number): string | undefined {
  let key: string;
  if (codePoint === 27) key = ESC;
  else if (codePoint === 13) key = "\r";
  else if (codePoint === 9) key = modifiers & SHIFT ? "\x1b[Z" : "\t";
  else if (codePoint === 127 || codePoint === 8) key = modifiers & CTRL ? "\x08" : "\x7f";
  else if (KEYPAD[codePoint] !== undefined) key = KEYPAD[codePoint]!;
  else if (codePoint >= 0xe000 && codePoint <= 0xf8ff)
    return undefined; // a modifier alone, media keys
  else {
    key = String.fromCodePoint(modifiers & SHIFT && shifted ? shifted : codePoint);
    if (modifiers & SHIFT && !shifted) key = key.toUpperCase();
    if (modifiers & CTRL) {
      const lower = key.toLowerCase();
      if (lower.length === 1 && lower >= "a" && lower <= "z") key = String.fromCharCode(lower.charCodeAt(0) & 0x1f);
      else if (CTRL_SYMBOLS[key] !== undefined) key = CTRL_SYMBOLS[key]!;
    }
  }
  return modifiers & ALT ? `${ESC}${key}` : key;
}

/** Modifiers as a bit mask from the protocol's `1 + mask` parameter (absent: none). */
function maskOf(parameter: string | undefined): number {
  return ((parameter ? Number(parameter) : 1) - 1) & ~LOCKS;
}

const KITTY = /^\x1b\[(\d+)(?::(\d*))?(?::\d*)?(?:;(\d*)(?::(\d+))?)?(?:;[\d:]*)?u$/;
const MODIFY_OTHER_KEYS = /^\x1b\[27;(\d+);(\d+)~$/;
const LETTER_KEY = /^\x1b\[1;(\d+)(?::(\d+))?([ABCDHFPQS])$/;
const TILDE_KEY = /^\x1b\[(\d+)(?:;(\d+)(?::(\d+))?)?~$/;
const PLAIN_CURSOR = /^\x1b\[([ABCDHF])$/;

/** The bytes for one key event of Pi's TUI (see the module comment); undefined when it sends nothing. */
export function terminalBytes(data: string, modes: KeyModes): string | undefined {
  if (data.startsWith(PASTE_START) && data.endsWith(PASTE_END)) {
    if (modes.bracketedPaste) return data;
    // A terminal without bracketed paste types the text; its line breaks are Enter.
    return data.slice(PASTE_START.length, -PASTE_END.length).replace(/\r?\n/g, "\r");
  }
  let match = KITTY.exec(data);
  if (match) {
    if (match[4] === RELEASE) return undefined;
    return encode(Number(match[1]), match[2] ? Number(match[2]) : undefined, maskOf(match[3]));
  }
  match = MODIFY_OTHER_KEYS.exec(data);
  if (match) return encode(Number(match[2]), undefined, maskOf(match[1]));
  match = LETTER_KEY.exec(data);
  if (match) {
    if (match[2] === RELEASE) return undefined;
    const letter = match[3]!;
    if (match[1] !== "1") return `\x1b[1;${match[1]}${letter}`;
    // Unmodified: F1–F4 are always ESC O; cursor keys follow the program's mode.
    return `${modes.applicationCursor || "PQS".includes(letter) ? "\x1bO" : "\x1b["}${letter}`;
  }
  match = TILDE_KEY.exec(data);
  if (match) {
    if (match[3] === RELEASE) return undefined;
    return match[2] && match[2] !== "1" ? `\x1b[${match[1]};${match[2]}~` : `\x1b[${match[1]}~`;
  }
  match = PLAIN_CURSOR.exec(data);
  if (match && modes.applicationCursor) return `\x1bO${match[1]}`;
  return data;
}
