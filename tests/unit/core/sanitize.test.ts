import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stripControlSequences } from "../../../src/core/sanitize.ts";

describe("stripControlSequences", () => {
  const cases: [string, string, string][] = [
    ["plain text stays", "hello\tworld\n", "hello\tworld\n"],
    ["SGR colours", "\x1b[31mred\x1b[0m ok", "red ok"],
    ["CSI with private parameters", "\x1b[?25lhidden\x1b[?25h", "hidden"],
    ["cursor movement and erase", "a\x1b[2K\x1b[1Gb", "ab"],
    ["OSC title ended by BEL", "\x1b]0;title\x07text", "text"],
    ["OSC hyperlink ended by ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["DCS ended by ST", "\x1bPq#0;2;0;0;0\x1b\\after", "after"],
    ["charset selection (nF escape)", "\x1b(Bplain", "plain"],
    ["two-character escapes", "\x1b7saved\x1b8", "saved"],
    ["C1 CSI on a decoded code point", "\u009b31mred", "red"],
    ["CRLF becomes LF", "one\r\ntwo\r\n", "one\ntwo\n"],
    ["other C0 and DEL go", "a\x00b\x07c\x08d\x7fe", "abcde"],
    ["C1 controls go", "a\u0085b\u009fc", "abc"],
    ["non-ASCII text stays (UTF-8 continuation bytes are not C1)", "héllo — ü 😀 中文", "héllo — ü 😀 中文"],
    ["a lone trailing ESC goes", "end\x1b", "end"],
    ["an unterminated OSC does not swallow the rest", "\x1b]0;never ended\nmore", "0;never ended\nmore"],
    ["a malformed CSI ends at the first foreign character", "\x1b[12\nnext", "12\nnext"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(stripControlSequences(input), expected));
  }
});
