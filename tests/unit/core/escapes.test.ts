import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeBase64Strict, decodeEscapes, parseInput } from "../../../src/core/request/input.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

const hex = (chars: string) => decodeEscapes(chars).toString("hex");

describe("decodeEscapes", () => {
  it("decodes the single-character escapes", () => {
    assert.equal(hex("\\n\\r\\t\\b\\f\\v\\0\\a\\e"), "0a0d09080c0b00071b");
    assert.equal(decodeEscapes("\\\\ \\\" \\'").toString(), "\\ \" '");
  });

  it("makes \\xHH exactly one raw byte, not a code point", () => {
    assert.equal(hex("\\xff"), "ff");
    assert.equal(hex("\\x00\\x03\\x1b[A"), "00031b5b41");
    assert.equal(hex("\\xC3\\xA9"), "c3a9");
  });

  it("writes \\uHHHH and \\u{H..H} as UTF-8 code points", () => {
    assert.equal(hex("\\u00ff"), "c3bf");
    assert.equal(decodeEscapes("\\u20ac \\u{1F600} \\u{41}").toString(), "€ 😀 A");
    assert.equal(decodeEscapes("\\ud83d\\ude00").toString(), "😀", "a surrogate pair is one code point");
  });

  it("keeps malformed and unknown escapes as written", () => {
    for (const kept of ["\\x4", "\\x", "\\xg1", "\\u12", "\\u{}", "\\u{110000}", "\\ud800", "\\q", "trailing\\"]) {
      assert.equal(decodeEscapes(kept).toString(), kept, kept);
    }
    assert.equal(decodeEscapes("\\x4\\n").toString(), "\\x4\n", "the next escape still decodes");
  });

  it("passes other text through as UTF-8", () => {
    assert.equal(decodeEscapes("plain héllo 中文").toString(), "plain héllo 中文");
    assert.equal(hex(""), "");
  });
});

describe("write_stdin input", () => {
  it("decodes strict base64, ignoring whitespace", () => {
    assert.equal(decodeBase64Strict("AP8KGw==").toString("hex"), "00ff0a1b");
    assert.equal(decodeBase64Strict("AP8K Gw").toString("hex"), "00ff0a1b", "padding is optional");
  });

  it("refuses malformed base64 with a clear error", () => {
    for (const bad of ["AP8KGw=", "!!!!", "A", "AB=C", "AAAA====", "AP8KGw-_"]) {
      assert.throws(
        () => decodeBase64Strict(bad),
        (error: Error) => error instanceof ExecRequestError && /chars_b64 is not valid base64/.test(error.message),
        bad,
      );
    }
  });

  it("refuses chars together with chars_b64", () => {
    assert.throws(() => parseInput("a", "YQ=="), /chars and chars_b64 are exclusive/);
  });

  it("is a poll when both are empty", () => {
    assert.equal(parseInput(undefined, undefined), undefined);
    assert.equal(parseInput("", ""), undefined);
  });

  it("gives exactly Ctrl-C and Ctrl-D in chars their terminal meaning; anything longer is data", () => {
    assert.deepEqual(parseInput("\\x03", undefined), { kind: "interrupt" });
    assert.deepEqual(parseInput("\u0004", undefined), { kind: "eof" });
    assert.deepEqual(parseInput("\\x03\\n", undefined), { kind: "bytes", bytes: Buffer.from([3, 10]) });
    assert.deepEqual(parseInput(undefined, "Aw=="), { kind: "bytes", bytes: Buffer.from([3]) }, "chars_b64 is always data");
  });
});
