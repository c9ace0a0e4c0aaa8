/** The `until_pattern` engine: what compiles, what is refused and how the error reads, and bounded linear matching. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  compileUntilPattern,
  cutAround,
  MATCHED_LINE_CHARS,
  MAX_PATTERN_INSTRUCTIONS,
  testedParts,
} from "../../../src/core/patterns/line-pattern.ts";
import { LINE_TEST_CHARS, MAX_PATTERN_CHARS } from "../../../src/core/shared/constants.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

/** The error `compileUntilPattern(source)` throws, checked to be an ExecRequestError. */
function refusal(source: string): string {
  try {
    compileUntilPattern(source);
  } catch (error) {
    assert.ok(error instanceof ExecRequestError, `an ExecRequestError, got ${String(error)}`);
    return error.message;
  }
  assert.fail(`${JSON.stringify(source)} compiled`);
}

describe("compileUntilPattern refuses, before anything runs, with a message naming the problem", () => {
  it("an empty pattern, suggesting an example and (?i)", () => {
    const message = refusal("");
    assert.match(message, /until_pattern is empty/);
    assert.match(message, /\(\?i\)ready/);
  });

  it("a pattern over 500 characters, with its length and the limit (counted in characters, not UTF-16 units)", () => {
    assert.equal(MAX_PATTERN_CHARS, 500);
    assert.match(refusal("a".repeat(501)), /until_pattern is 501 characters long; the limit is 500/);
    assert.doesNotThrow(() => compileUntilPattern("a".repeat(500)));
    assert.doesNotThrow(() => compileUntilPattern("😀".repeat(500)), "500 emoji are 1000 UTF-16 units but 500 characters");
  });

  it("look-ahead and negative look-ahead, where they are and what to write instead", () => {
    const ahead = refusal("foo(?=bar)");
    assert.match(ahead, /uses look-ahead `\(\?=` at character 4, which the linear-time pattern engine cannot run/);
    assert.match(ahead, /`foobar` rather than `foo\(\?=bar\)`/);
    assert.match(refusal("foo(?!bar)"), /uses negative look-ahead `\(\?!` at character 4/);
  });

  it("look-behind (which the engine misreports as a bad named group) is named as look-behind", () => {
    assert.match(refusal("(?<=error: ).*failed"), /uses look-behind `\(\?<=` at character 1/);
    assert.match(refusal("x(?<!y)z"), /uses look-behind `\(\?<!` at character 2/);
    assert.doesNotThrow(() => compileUntilPattern("[(?<=]x"), "inside a class it is just characters");
  });

  it("back-references by number and by name, suggesting to write the text out", () => {
    assert.match(refusal("(a)\\1"), /uses a back-reference `\\1` at character 4/);
    assert.match(refusal("(?<w>a)\\k<w>"), /uses a back-reference `\\k`/);
    assert.match(refusal("(?P<w>a)(?P=w)"), /uses a back-reference `\(\?P=`/);
    assert.match(refusal("(a)\\1"), /Write the repeated text out/);
  });

  it("atomic groups, possessive repeats and conditionals, with the plain form to use", () => {
    assert.match(refusal("(?>ab)c"), /uses an atomic group `\(\?>`.*Use a plain group/);
    assert.match(refusal("a++b"), /uses a possessive repeat `\+\+`.*`a\+` rather than `a\+\+`/);
    assert.match(refusal("(?(1)a|b)"), /uses a conditional `\(\?\(`/);
  });

  it("invalid syntax, saying what is wrong and where", () => {
    assert.match(refusal("(abc"), /until_pattern is not a valid regular expression: missing closing \) `\(abc` at character 1/);
    assert.match(refusal("ab[z-a]"), /invalid character class range `z-a` at character 4/);
    assert.match(refusal("*a"), /missing argument to repetition operator `\*` at character 1/);
    assert.match(refusal("a\\"), /trailing backslash/);
    assert.match(refusal("x{2,1}"), /invalid repeat count/);
    assert.match(refusal("😀😀[z-a]"), /`z-a` at character 4/, "positions count characters, not UTF-16 units");
  });

  it("escapes from other dialects, with RE2's spelling", () => {
    assert.match(refusal("\\u0041"), /invalid escape sequence `\\u`.*write a code point as `\\x\{0041\}`/);
    assert.match(refusal("done\\Z"), /use `\$`/);
  });

  it("a pattern whose program is too large to run on every character, naming the cause", () => {
    const message = refusal("\\p{L}{1000}".repeat(2));
    assert.match(message, new RegExp(`too complex: it compiles to \\d+ instructions, the limit is ${MAX_PATTERN_INSTRUCTIONS}`));
    assert.match(message, /`\.\{1000\}`/);
    const alternation = Array.from({ length: 60 }, (_, k) => `word${k}x`).join("|");
    assert.ok(alternation.length > 400);
    assert.doesNotThrow(() => compileUntilPattern(alternation), "a long alternation of words is small");
  });

  it("every refusal says nothing was started or written", () => {
    for (const source of ["a".repeat(600), "foo(?=x)", "(a)\\1", "(abc", "\\p{L}{1000}\\p{L}{1000}"]) {
      assert.match(refusal(source), /Nothing was started or written/, source);
    }
  });
});

describe("compileUntilPattern on RE2's corners", () => {
  it("compiles at once a class holding `[:` with no `:]` after it, a literal `[` as RE2 reads it (in a process of its own, which a loop would never end)", () => {
    const engine = pathToFileURL(new URL("../../../src/core/patterns/line-pattern.ts", import.meta.url).pathname).href;
    const script = `import(${JSON.stringify(engine)}).then((m) => { const p = m.compileUntilPattern("x[[:a]"); console.log(p.test("x:") && p.test("x[") && !p.test("xb")); })`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { encoding: "utf8", timeout: 20_000 });
    assert.equal(run.signal, null, "it ended by itself");
    assert.equal(run.stdout.trim(), "true", run.stderr);
  });
});

describe("LinePattern.test", () => {
  it("(a+)+$ against 30 a's and a ! returns in milliseconds (a backtracking engine takes minutes)", () => {
    const pattern = compileUntilPattern("(a+)+$");
    const start = performance.now();
    assert.equal(pattern.test(`${"a".repeat(30)}!`), false);
    assert.equal(pattern.test("a".repeat(30)), true);
    const elapsed = performance.now() - start;
    // Generous for a busy machine; backtracking would take minutes.
    assert.ok(elapsed < 2_000, `took ${elapsed.toFixed(1)} ms`);
  });

  it("(?i) makes the pattern case-insensitive: (?i)ready matches READY", () => {
    assert.equal(compileUntilPattern("(?i)ready").test("Server READY on :3000"), true);
    assert.equal(compileUntilPattern("ready").test("Server READY on :3000"), false);
    assert.equal(compileUntilPattern("(?i:é)t").test("Ét"), true, "Unicode case folding, scoped flag");
  });

  it("matches anywhere in the line, and ^ and $ are the line's start and end", () => {
    const pattern = compileUntilPattern("^Listening on port \\d+$");
    assert.equal(pattern.test("Listening on port 3000"), true);
    assert.equal(pattern.test("  Listening on port 3000"), false);
    assert.equal(compileUntilPattern("port \\d+").test("  Listening on port 3000 (pid 7)"), true);
  });

  it("handles Unicode: emoji, CJK, \\p classes; . is one code point", () => {
    assert.equal(compileUntilPattern("^.$").test("😀"), true);
    assert.equal(compileUntilPattern("準備完了").test("サーバー: 準備完了 ✅"), true);
    assert.equal(compileUntilPattern("^\\p{Han}+$").test("完了"), true);
    assert.equal(compileUntilPattern("✅ ready").test("✅ ready"), true);
    assert.equal(compileUntilPattern("^\\w$").test("é"), false, "\\w is ASCII, as in RE2");
  });

  it("matches a [y/N] prompt with the brackets escaped, and an unterminated password prompt", () => {
    const yesNo = compileUntilPattern("\\[y/N\\]\\s*$");
    assert.equal(yesNo.test("Continue? [y/N] "), true);
    assert.equal(yesNo.test("Continue? [y/N] y"), false);
    assert.equal(compileUntilPattern("(?i)password:\\s*$").test("[sudo] Password: "), true);
  });

  it("a line longer than the bound is tested as its first and last halves only", () => {
    const half = LINE_TEST_CHARS / 2;
    const middle = "x".repeat(LINE_TEST_CHARS);
    const line = `start ${middle} needle ${middle} end`;
    const parts = testedParts(line);
    assert.equal(parts.length, 2);
    assert.equal(parts[0]!.length, half);
    assert.equal(parts[1]!.length, half);
    assert.equal(compileUntilPattern("start").test(line), true);
    assert.equal(compileUntilPattern("end$").test(line), true);
    assert.equal(compileUntilPattern("needle").test(line), false, "the middle of a huge line is not searched");
  });

  it("a 20 MB line costs one bounded test, not 20 MB of matching", () => {
    const line = "ab".repeat(10 * 1024 * 1024);
    const pattern = compileUntilPattern("a[ab]{8}c");
    const start = performance.now();
    assert.equal(pattern.test(line), false);
    const elapsed = performance.now() - start;
    // Generous for a busy machine: what is tested is the next test's (the line's two halves only).
    assert.ok(elapsed < 5_000, `took ${elapsed.toFixed(1)} ms`);
  });

  it("cuts never split a surrogate pair", () => {
    const line = "😀".repeat(LINE_TEST_CHARS);
    for (const part of testedParts(line)) assert.equal(part, "😀".repeat(part.length / 2), "whole emoji only");
  });
});

describe("LinePattern.excerpt (matched_line)", () => {
  it("returns a short line as it is", () => {
    assert.equal(compileUntilPattern("ready").excerpt("server ready"), "server ready");
  });

  it("cuts a long line to 500 characters around the match, marking the cuts", () => {
    const line = `${"a".repeat(2_000)} READY at 3000 ${"b".repeat(2_000)}`;
    const excerpt = compileUntilPattern("READY at \\d+").excerpt(line);
    assert.equal(excerpt.length, MATCHED_LINE_CHARS);
    assert.match(excerpt, /^….*READY at 3000.*…$/);
  });

  it("keeps the start of the line when the match is there", () => {
    const excerpt = cutAround(`READY ${"x".repeat(1_000)}`, 0, 5);
    assert.ok(excerpt.startsWith("READY"));
    assert.ok(excerpt.endsWith("…"));
    assert.equal(excerpt.length, MATCHED_LINE_CHARS - 1);
  });
});
