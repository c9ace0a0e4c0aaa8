import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_CONTROL_SEQUENCE_CHARS, renderTerminalText, TerminalText } from "../../../src/core/output/terminal-text.ts";

describe("renderTerminalText strips control sequences", () => {
  const cases: [string, string, string][] = [
    ["plain text stays", "hello\tworld\n", "hello\tworld\n"],
    ["SGR colours", "\x1b[31mred\x1b[0m ok", "red ok"],
    ["CSI with private parameters", "\x1b[?25lhidden\x1b[?25h", "hidden"],
    ["cursor moves to other lines and erases of the screen", "a\x1b[2A\x1b[5;3H\x1b[2Jb\x1b[1J", "ab"],
    ["OSC title ended by BEL", "\x1b]0;title\x07text", "text"],
    ["OSC hyperlink ended by ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["DCS ended by ST", "\x1bPq#0;2;0;0;0\x1b\\after", "after"],
    ["APC, PM and SOS ended by ST, also the C1 ST", "\x1b_Ga=T;AAAA\x1b\\a\x1b^pm\x1b\\b\x1bXsos\u009cc", "abc"],
    ["C1 OSC and DCS", "\u009d0;t\u0007x\u0090q\u009cy", "xy"],
    ["charset selection (nF escape)", "\x1b(Bplain", "plain"],
    ["two-character escapes", "\x1b7saved\x1b8", "saved"],
    ["C1 CSI on a decoded code point", "\u009b31mred", "red"],
    ["CRLF becomes LF", "one\r\ntwo\r\n", "one\ntwo\n"],
    ["other C0 and DEL go", "a\x00b\x07cd\x7fe", "abcde"],
    ["C1 controls go", "a\u0085b\u009fc", "abc"],
    ["non-ASCII text stays (UTF-8 continuation bytes are not C1)", "héllo — ü 😀 中文", "héllo — ü 😀 中文"],
    ["a lone trailing ESC goes", "end\x1b", "end"],
    ["an unterminated OSC does not swallow the rest", "\x1b]0;never ended\nmore", "0;never ended\nmore"],
    ["a malformed CSI ends at the first foreign character", "\x1b[12\nnext", "12\nnext"],
    ["a control string abandoned by another escape is shown as text", "\x1b]0;title\x1b[31mred", "0;titlered"],
    ["CAN and SUB abandon a control string", "\x1bPdata\x18after", "dataafter"],
    ["ESC before a character that cannot follow it goes alone", "a\x1b\x01b\x1béc", "abéc"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(renderTerminalText(input), expected));
  }

  it(`swallows a terminated control string up to ${MAX_CONTROL_SEQUENCE_CHARS} characters, and shows a longer one as text`, () => {
    const body = (length: number) => `52;c;${"A".repeat(length - 5)}`;
    const same = (actual: string, expected: string) =>
      assert.ok(actual === expected, `${actual.length} characters, not the expected ${expected.length}`);
    same(renderTerminalText(`\x1b]${body(MAX_CONTROL_SEQUENCE_CHARS)}\x07after`), "after");
    same(renderTerminalText(`\x1bP${body(MAX_CONTROL_SEQUENCE_CHARS)}\x1b\\after`), "after");
    same(renderTerminalText(`\x1b]${body(MAX_CONTROL_SEQUENCE_CHARS + 1)}\x07after`), `${body(MAX_CONTROL_SEQUENCE_CHARS + 1)}after`);
    same(renderTerminalText(`\x1b[${"1;".repeat(MAX_CONTROL_SEQUENCE_CHARS / 2 - 1)}1mx`), "x");
    const params = "1;".repeat(MAX_CONTROL_SEQUENCE_CHARS);
    same(renderTerminalText(`\x1b[${params}mx`), `${params}mx`);
  });
});

describe("renderTerminalText makes invisible characters visible", () => {
  const cases: [string, string, string][] = [
    ["a right-to-left override", "access = \u202Euser\u2066admin\u2069", "access = <U+202E>user<U+2066>admin<U+2069>"],
    ["bidi marks", "a\u200Eb\u200Fc\u061Cd", "a<U+200E>b<U+200F>c<U+061C>d"],
    ["zero-width characters", "a\u200Bb\u200Cc\u2060d\uFEFFe", "a<U+200B>b<U+200C>c<U+2060>d<U+FEFF>e"],
    ["a zero width joiner outside an emoji", "x\u200Dy", "x<U+200D>y"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a<U+2028>b<U+2029>c"],
    ["tag characters (invisible instructions)", "ok\u{E0041}\u{E0042}", "ok<U+E0041><U+E0042>"],
    ["a soft hyphen and a Hangul filler", "co\u00ADop\u3164", "co<U+00AD>op<U+3164>"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(renderTerminalText(input), expected));
  }

  it("keeps emoji sequences whole: a joiner between emoji, variation selectors, astral text", () => {
    for (const text of ["👨‍👩‍👧", "🏳️‍🌈", "👩🏽‍💻", "❤️", "𝄞 𝕏 𠀀"]) assert.equal(renderTerminalText(text), text);
  });

  it("shows an invisible character written on a redrawn line as well", () => {
    assert.equal(renderTerminalText("an old long line\rA\u202EB\n"), "A<U+202E>Bg line\n");
  });
});

describe("renderTerminalText redraws lines like a terminal", () => {
  it("applies erase-in-line where the cursor is, after a lone CR or not", () => {
    assert.equal(renderTerminalText("abc\x1b[2Kdef\n"), "   def\n");
    assert.equal(renderTerminalText("abc\x1b[1Kd\n"), "   d\n");
    assert.equal(renderTerminalText("abc\x1b[Kd\x1b[0J\n"), "abcd\n");
    assert.equal(renderTerminalText("abcdef\rxy\x1b[K\n"), "xy\n");
    assert.equal(renderTerminalText("abcdef\rxyz\x1b[1K!\n"), "   !ef\n");
    assert.equal(renderTerminalText("abcdef\rxy\x1b[2Kz\n"), "  z\n");
  });

  it("lets a later write show through an earlier erase, and an erase blank an earlier write", () => {
    assert.equal(renderTerminalText("0123456789\r\x1b[K01\r\x1b[1K\rab\n"), "ab\n");
    assert.equal(renderTerminalText("0123456789\rabcde\x1b[1K\r\x1b[Kx\n"), "x\n");
    assert.equal(renderTerminalText("0123456789\rabcde\x1b[1Kfg\x1b[0K\n"), "     fg\n");
  });

  it("keeps a line's text before its first lone CR in the redraw", () => {
    assert.equal(renderTerminalText("\x1b[32mdownloading\x1b[0m 10%\rdownloading 20%\nnext\n"), "downloading 20%\nnext\n");
  });
});

describe("renderTerminalText moves the cursor within a line like a terminal", () => {
  it("leaves only a spinner's last frame: cursor to column 1 and erase to the end (npm, ora, readline)", () => {
    const frames = ["⠋", "⠙", "⠹"].map((frame) => `${frame} installing\x1b[1G\x1b[0K`).join("");
    assert.equal(renderTerminalText(`${frames}added 3 packages in 1s\n`), "added 3 packages in 1s\n");
    assert.equal(renderTerminalText(`⠋ idealTree\x1b[G\x1b[2K? package name: `), "? package name: ");
  });

  it("goes to column n with CSI n G, n cells right or left with CSI n C and CSI n D, one left with a backspace", () => {
    assert.equal(renderTerminalText("abcdef\x1b[3GX\n"), "abXdef\n");
    assert.equal(renderTerminalText("abcdef\x1b[GX\x1b[0GY\n"), "Ybcdef\n");
    assert.equal(renderTerminalText("abcdef\x1b[3DX\x1b[CY\n"), "abcXeY\n");
    assert.equal(renderTerminalText("abc\b\bX\n"), "aXc\n");
    assert.equal(renderTerminalText("\b\bab\n"), "ab\n"); // never left of column 1
  });

  it("shows cells it skipped over as blanks, and moves at most to column 120 past the written line", () => {
    assert.equal(renderTerminalText("ab\x1b[6Gx\x1b[2Cy\n"), "ab   x  y\n");
    assert.equal(renderTerminalText("ab\x1b[9G\n"), "ab\n");
    assert.equal(renderTerminalText("a\x1b[100000000Gx\n"), `a${" ".repeat(118)}x\n`);
    assert.equal(renderTerminalText(`${"a".repeat(200)}\x1b[150GX\n`), `${"a".repeat(149)}X${"a".repeat(50)}\n`);
  });

  it("redraws what readline redraws: the prompt and the line after a backspace, the cursor back into the line", () => {
    assert.equal(renderTerminalText("> 1+12\x1b[1G\x1b[0J> 1+1\x1b[6G\r\n2\n"), "> 1+1\n2\n");
  });

  it("leaves sequences with other parameters or finals alone", () => {
    assert.equal(renderTerminalText("abc\x1b[?1K\x1b[1;2G\x1b[3J\x1b[5Hd\n"), "abcd\n");
  });
});

describe("renderTerminalText on a line being redrawn", () => {
  it("takes a run of CRs at once: lone if any of them is, part of the line end when a single one precedes a LF", () => {
    assert.equal(renderTerminalText("abc\r\r\ndef"), "abc\ndef");
    assert.equal(renderTerminalText("abc\r\rX\n"), "Xbc\n");
    assert.equal(renderTerminalText("abc\r\r"), "abc");
    assert.equal(renderTerminalText(`${"\r".repeat(1000)}done\n`), "done\n");
  });

  it("writes its text into the cells up to each control, through more cells than it starts with", () => {
    assert.equal(renderTerminalText("xxxxxx\rab\x1b[31mcd\u202eef\n"), "abcd<U+202E>ef\n");
    assert.equal(renderTerminalText(`${"x".repeat(300)}\r${"y".repeat(1000)}\nz`), `${"y".repeat(1000)}\nz`);
    assert.equal(renderTerminalText(`a\r${"😀".repeat(300)}\n`), `${"😀".repeat(300)}\n`);
  });
});

describe("TerminalText", () => {
  it("says what it holds back: the start of the sequence the text ended in", () => {
    const terminal = new TerminalText();
    assert.equal(terminal.write("a\x1b]0;ti", false), "a");
    assert.equal(terminal.heldText, "\x1b]0;ti");
    assert.equal(terminal.write("tle\x07b", false), "b");
    assert.equal(terminal.heldText, "");
  });
});
