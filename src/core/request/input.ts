/*
 * What a `write_stdin` call sends: `chars` with C-style escapes (a model cannot put a raw Ctrl-C or
 * ESC in a JSON tool call reliably), or `chars_b64`, always raw data. On pipes a `chars` of exactly
 * Ctrl-C interrupts the job's group and Ctrl-D closes its stdin, as a terminal's line discipline would.
 */
import { ExecRequestError } from "../shared/errors.ts";

export type JobInput = { kind: "bytes"; bytes: Buffer } | { kind: "interrupt" } | { kind: "eof" };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64: standard alphabet, whitespace ignored, padding optional but never wrong. */
export function decodeBase64Strict(text: string): Buffer {
  const compact = text.replace(/[\t\n\r ]/g, "");
  const padded = compact.includes("=");
  if (!BASE64.test(compact) || (padded ? compact.length % 4 !== 0 : compact.length % 4 === 1)) {
    throw new ExecRequestError(
      "chars_b64 is not valid base64 (standard alphabet A-Z a-z 0-9 + /, optional = padding). Nothing was written.",
    );
  }
  return Buffer.from(compact, "base64");
}

/**
 * The input of a `write_stdin` call, or undefined for a pure poll. `chars` and `chars_b64` are
 * exclusive; both are checked before anything is written.
 */
export function parseInput(chars: string | undefined, charsB64: string | undefined): JobInput | undefined {
  if (chars && charsB64) {
    throw new ExecRequestError(
      "chars and chars_b64 are exclusive: send text in chars or raw bytes in chars_b64, not both. Nothing was written.",
    );
  }
  if (charsB64) {
    const bytes = decodeBase64Strict(charsB64);
    return bytes.length > 0 ? { kind: "bytes", bytes } : undefined;
  }
  if (!chars) return undefined;
  const bytes = decodeEscapes(chars);
  if (bytes.length === 1 && bytes[0] === 0x03) return { kind: "interrupt" };
  if (bytes.length === 1 && bytes[0] === 0x04) return { kind: "eof" };
  return { kind: "bytes", bytes };
}

const SIMPLE: Record<string, number> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  b: 0x08,
  f: 0x0c,
  v: 0x0b,
  "0": 0x00,
  a: 0x07,
  e: 0x1b,
  "\\": 0x5c,
  '"': 0x22,
  "'": 0x27,
};

const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const BRACED = /^\{([0-9a-fA-F]{1,6})\}/;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * `\n \r \t \b \f \v \0 \a \e \\ \" \'`; `\xHH` one raw byte (`\xff` is 0xFF, not U+00FF); `\uHHHH`
 * (a surrogate pair makes one code point) and `\u{H..H}` a code point as UTF-8. Anything else after a
 * backslash, a malformed escape and a trailing backslash stay as written.
 */
export function decodeEscapes(chars: string): Buffer {
  const parts: Buffer[] = [];
  let literalStart = 0;
  const flushLiteral = (end: number) => {
    if (end > literalStart) parts.push(Buffer.from(chars.slice(literalStart, end), "utf8"));
  };
  const emit = (at: number, consumed: number, bytes: Buffer) => {
    flushLiteral(at);
    parts.push(bytes);
    literalStart = at + consumed;
    return at + consumed;
  };

  let i = 0;
  while (i < chars.length) {
    if (chars[i] !== "\\" || i + 1 >= chars.length) {
      i++;
      continue;
    }
    const kind = chars[i + 1]!;
    const simple = SIMPLE[kind];
    if (simple !== undefined) {
      i = emit(i, 2, Buffer.of(simple));
      continue;
    }
    if (kind === "x" && HEX2.test(chars.slice(i + 2, i + 4))) {
      i = emit(i, 4, Buffer.of(Number.parseInt(chars.slice(i + 2, i + 4), 16)));
      continue;
    }
    if (kind === "u") {
      const braced = BRACED.exec(chars.slice(i + 2, i + 11));
      if (braced) {
        const code = Number.parseInt(braced[1]!, 16);
        if (code <= 0x10ffff && !isHighSurrogate(code) && !isLowSurrogate(code)) {
          i = emit(i, 2 + braced[0].length, Buffer.from(String.fromCodePoint(code), "utf8"));
          continue;
        }
      } else if (HEX4.test(chars.slice(i + 2, i + 6))) {
        const code = Number.parseInt(chars.slice(i + 2, i + 6), 16);
        const next = chars.slice(i + 6, i + 12);
        if (isHighSurrogate(code) && next.startsWith("\\u") && HEX4.test(next.slice(2))) {
          const low = Number.parseInt(next.slice(2), 16);
          if (isLowSurrogate(low)) {
            const combined = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            i = emit(i, 12, Buffer.from(String.fromCodePoint(combined), "utf8"));
            continue;
          }
        }
        if (!isHighSurrogate(code) && !isLowSurrogate(code)) {
          i = emit(i, 6, Buffer.from(String.fromCodePoint(code), "utf8"));
          continue;
        }
      }
    }
    // Unknown or malformed: keep the backslash and move on; the next character is ordinary text.
    i += 1;
  }
  flushLiteral(chars.length);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
