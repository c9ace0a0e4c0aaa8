import { MAX_CONTROL_SEQUENCE_CHARS } from "../../src/core/output/terminal-text.ts";

/**
 * Adversarial terminal output for tests and the benchmark: byte streams shaped to make a naive
 * control-sequence stripper or line renderer quadratic, and a small seeded PRNG for fuzzing.
 */

export const MiB = 1024 * 1024;

/** mulberry32: a tiny deterministic PRNG, so a failing fuzz case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `unit` repeated up to `bytes` bytes (whole units), as UTF-8. */
function repeated(unit: string, bytes = MiB, prefix = ""): Buffer {
  const one = Buffer.byteLength(unit);
  return Buffer.from(prefix + unit.repeat(Math.max(1, Math.floor((bytes - Buffer.byteLength(prefix)) / one))));
}

function randomBytes(seed: number, length: number): Buffer {
  const random = prng(seed);
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/** Pieces a stream is built from, each as bytes. */
const PIECES: Buffer[] = [
  "\x1b",
  "\x1b[",
  "\x1b]",
  "\x1bP",
  "\x1b_",
  "\x1b^",
  "\x1bX",
  "\x1b\\",
  "\x1b(",
  "\x1b7",
  "\x07",
  "\x18",
  "\x1a",
  "\x00",
  "\x08",
  "\x7f",
  "[",
  "]",
  "\\",
  ";",
  "0",
  "1",
  "2",
  "31",
  "K",
  "m",
  "?25l",
  "J",
  "H",
  "\u009b",
  "\u009c",
  "\u009d",
  "\u0090",
  "\u0085",
  "\u009f",
  "\r\n",
  "\n",
  "\t",
  " ",
  "a",
  "text ",
  "é",
  "中",
  "😀",
  "👨\u200d👩",
  "\u200d",
  "\u202e",
  "\u2066",
  "\u200b",
  "\ufeff",
  "\u2028",
  "\u{e0041}",
].map((piece) => Buffer.from(piece));
/** What redraws a line in place: a lone CR, a backspace, cursor moves and erases in the line. */
const REDRAWS = ["\r", "\b", "\x1b[1G", "\x1b[G", "\x1b[5G", "\x1b[2D", "\x1b[C", "\x1b[2K", "\x1b[1K", "\x1b[K", "\u009b3G"].map((piece) =>
  Buffer.from(piece),
);
/** Bytes that redraw a line alone or as the final byte of a CSI: left out of a stream without redraws. */
const REDRAW_BYTES = new Set([0x0d, 0x08, 0x47, 0x43, 0x44, 0x4b]);
const BROKEN_UTF8 = [
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xc2]),
  Buffer.from([0x9b]),
  Buffer.from([0xff]),
  Buffer.from([0xf0, 0x9f, 0x98]),
];

/**
 * A random stream for fuzzing, rich in escape introducers and terminators; `redraws`: with what
 * redraws a line (lone CRs, backspaces, cursor moves and erases in the line), else without any.
 */
export function fuzzStream(random: () => number, redraws: boolean): Buffer {
  const parts: Buffer[] = [];
  const count = 1 + Math.floor(random() * 200);
  for (let i = 0; i < count; i++) {
    const roll = random();
    if (roll < 0.02)
      parts.push(Buffer.from("x".repeat(Math.floor(random() * (MAX_CONTROL_SEQUENCE_CHARS + 50))))); // around the bound
    else if (roll < 0.07) parts.push(BROKEN_UTF8[Math.floor(random() * BROKEN_UTF8.length)]!);
    else if (roll < 0.1) {
      const byte = Math.floor(random() * 256);
      parts.push(Buffer.from([!redraws && REDRAW_BYTES.has(byte) ? 0x0a : byte]));
    } else if (redraws && roll < 0.14) parts.push(REDRAWS[Math.floor(random() * REDRAWS.length)]!);
    else {
      const piece = PIECES[Math.floor(random() * PIECES.length)]!;
      if (redraws || piece.length > 1 || !REDRAW_BYTES.has(piece[0]!)) parts.push(piece);
    }
  }
  return Buffer.concat(parts);
}

export interface HostileShape {
  name: string;
  bytes: () => Buffer;
}

/** About 1 MiB each (the 20 MB line excepted). */
export const HOSTILE_SHAPES: HostileShape[] = [
  { name: "unterminated OSC, one per 64 characters", bytes: () => repeated(`\x1b]0;${"t".repeat(60)}`) },
  { name: "one unterminated OSC before 1 MiB of text", bytes: () => repeated("text ", MiB, "\x1b]0;") },
  { name: "bare OSC introducers", bytes: () => repeated("\x1b]") },
  { name: "unterminated DCS", bytes: () => repeated("\x1bPq#0;2;0;0;0") },
  { name: "unterminated APC", bytes: () => repeated("\x1b_Gf=100;AAAA") },
  { name: "unterminated PM", bytes: () => repeated("\x1b^pm") },
  { name: "unterminated SOS", bytes: () => repeated("\x1bXsos") },
  { name: "C1 OSC introducers", bytes: () => repeated("\u009d0;x") },
  { name: "C1 DCS, SOS, PM, APC, CSI introducers", bytes: () => repeated("\u0090a\u0098b\u009ec\u009fd\u009b1") },
  { name: "erase to line start on a long redrawn line", bytes: () => repeated("\x1b[1K", MiB, `\r${"x".repeat(100_000)}`) },
  { name: "erase-in-line storm", bytes: () => repeated("ab\x1b[1Kc\x1b[2K\x1b[K\r") },
  { name: "erase-in-display storm", bytes: () => repeated("\x1b[2J\x1b[H\x1b[3J") },
  { name: "empty lines between controls", bytes: () => repeated("\n\x01") },
  { name: "coloured one-character lines", bytes: () => repeated("\x1b[32mx\x1b[0m\r\n") },
  { name: "redrawn one-character lines", bytes: () => repeated("a\rb\n") },
  { name: "100 000 lone CRs", bytes: () => Buffer.from(`${"\r".repeat(100_000)}done\n`) },
  { name: "spinner frames on one line", bytes: () => repeated("⠋ installing\x1b[1G\x1b[0K") },
  { name: "cursor moves and backspaces on one line", bytes: () => repeated("ab\b\bcd\x1b[3C\x1b[9Dx\x1b[7G") },
  { name: "cursor to a far column on every line", bytes: () => repeated("\x1b[999Gx\n") },
  { name: "1 MiB of progress redraws", bytes: () => repeated("\rprogress 42%") },
  { name: "deep CSI parameter list", bytes: () => repeated("1;", MiB, "\x1b[") },
  { name: "CSIs with 1 000 parameters", bytes: () => repeated(`\x1b[${"1;".repeat(1_000)}m`) },
  { name: "20 MB line", bytes: () => Buffer.from("x".repeat(20_000_000)) },
  { name: "20 MB line of colours", bytes: () => repeated("\x1b[31mx\x1b[0m", 20_000_000) },
  { name: "random bytes", bytes: () => randomBytes(1, MiB) },
];

/** C0 controls except TAB and LF, DEL, C1 controls: what model text must never contain. */
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
