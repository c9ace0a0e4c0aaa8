/**
 * C-style escapes for `write_stdin`'s `chars`. A model cannot put a raw Ctrl-C or ESC byte in a JSON
 * tool call reliably, so it writes `\x03` or `\e[A` and the bytes are produced here.
 *
 * Table: `\n \r \t \b \f \v \0 \a \e`; `\xHH` is exactly one raw byte (`\xff` is the byte 0xFF, not
 * U+00FF encoded as C3 BF); `\uHHHH` and `\u{H..H}` (1–6 hex) are a code point written as UTF-8, and a
 * `\uHHHH` surrogate pair makes one code point; `\\ \" \'`. Anything else after a backslash, a
 * malformed escape (`\x4`, `\u12`, a lone surrogate) and a trailing backslash stay as written.
 * Every other character passes through as its UTF-8 bytes.
 */

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
