import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import {
  codexChunkId,
  codexHeader,
  codexNotes,
  codexResultText,
  codexTokenBudget,
  codexUnknownJobError,
  codexWallTime,
  formattedTruncate,
  middleCut,
  tokensForBytes,
  truncateWithOmission,
} from "../../../src/pi/results/codex.ts";
import { lineCount } from "../../../src/pi/results/output-cap.ts";

// Expected strings below are Codex's own test expectations (utils/output-truncation truncate_tests.rs,
// core/src/tools/context_tests.rs), with the `Warning: truncated output …` line Codex now puts first.
const LONG = "this is an example of a long output that should be truncated";
const TWO_LINES = `${LONG}\nalso some other line`;

describe("Codex truncation", () => {
  it("cuts the middle of a token budget exactly as Codex's tests expect", () => {
    assert.equal(
      formattedTruncate(LONG, 5),
      "Warning: truncated output (original token count: 15)\nTotal output lines: 1\n\nthis is an…10 tokens truncated… truncated",
    );
    assert.equal(
      formattedTruncate(TWO_LINES, 10),
      "Warning: truncated output (original token count: 21)\nTotal output lines: 2\n\nthis is an example o…11 tokens truncated…also some other line",
    );
    assert.equal(
      formattedTruncate("example output", 1),
      "Warning: truncated output (original token count: 4)\nTotal output lines: 1\n\nex…3 tokens truncated…ut",
    );
    assert.equal(
      formattedTruncate("abcdefgh\nijklmnop", 2),
      "Warning: truncated output (original token count: 5)\nTotal output lines: 2\n\nabcd…3 tokens truncated…mnop",
    );
  });

  it("returns text within the budget unchanged, with no warning", () => {
    assert.equal(formattedTruncate("example output", 10), "example output");
    assert.equal(formattedTruncate("x".repeat(40_000), 10_000), "x".repeat(40_000));
    assert.equal(formattedTruncate("", 0), "");
  });

  it("never cuts inside a character, and counts tokens over the budget in bytes", () => {
    // "é" is two bytes: a 5-byte budget keeps one before (2 bytes) and one after (the next boundary past byte 7).
    assert.equal(middleCut("ééééé", 5), "é…2 tokens truncated…é");
    assert.equal(middleCut("example", 0), "…2 tokens truncated…");
    assert.equal(middleCut("", 0), "");
  });

  it("keeps 20 000 bytes at each end of a long output under the default budget", () => {
    const text = `${"h".repeat(30_000)}${"t".repeat(30_000)}`;
    const cut = formattedTruncate(text, 10_000);
    assert.ok(
      cut.startsWith(
        `Warning: truncated output (original token count: 15000)\nTotal output lines: 1\n\n${"h".repeat(20_000)}…5000 tokens truncated…`,
      ),
    );
    assert.ok(cut.endsWith(`…${"t".repeat(20_000)}`));
    assert.equal(cut.length, 20_000 * 2 + "…5000 tokens truncated…".length + cut.indexOf("\n\n") + 2);
  });

  it("counts lines as Rust's str::lines does", () => {
    assert.deepEqual(["", "a", "a\n", "a\nb", "\n", "\n\n", "a\r\nb\r\n", "a\rb"].map(lineCount), [0, 1, 1, 2, 1, 2, 2, 1]);
  });

  it("estimates tokens as ceil(UTF-8 bytes / 4)", () => {
    assert.deepEqual(
      ["", "a", "abcd", "abcde", "é", "😀😀"].map((text) => tokensForBytes(Buffer.byteLength(text))),
      [0, 1, 1, 2, 1, 2],
    );
  });

  it("writes the retention form without a line count, and keeps the omission line exactly once", () => {
    const marker = "... 123456 bytes omitted ...";
    const raw = `HEAD-${"a".repeat(100)}\n${marker}\nTAIL-${"z".repeat(100)}`;
    const text = truncateWithOmission(raw, 123_456, 4, 42_000);
    assert.equal(
      text,
      `Warning: truncated output (original token count: 42000)\n${marker}\n\nHEAD-aaa…${Math.ceil((raw.length - 16) / 4)} tokens truncated…zzzzzzzz`,
    );
    assert.equal(text.split(marker).length - 1, 1);
    assert.equal(truncateWithOmission(raw, 123_456, 10_000, 42_000), raw);
    assert.equal(truncateWithOmission("remaining output", 123_456, 10_000, 42_000), `${marker}\nremaining output`);
  });
});

describe("Codex result text", () => {
  const base = { chunkId: "abc123", wallMs: 1250, exitCode: 0, originalTokenCount: 10 };

  it("writes Codex's header in Codex's order for an exited call", () => {
    const text = codexResultText({ ...base, output: "token one token two token three token four token five" });
    assert.equal(
      text,
      "Chunk ID: abc123\nWall time: 1.2500 seconds\nProcess exited with code 0\nOriginal token count: 10\nOutput:\ntoken one token two token three token four token five",
    );
  });

  it("matches the shape of Codex's truncated-response test with max_output_tokens 4", () => {
    const text = codexResultText({ ...base, output: "token one token two token three token four token five", maxOutputTokens: 4 });
    assert.match(
      text,
      /^Chunk ID: abc123\nWall time: \d+\.\d{4} seconds\nProcess exited with code 0\nOriginal token count: 10\nOutput:\n.*tokens truncated.*$/s,
    );
    assert.equal(
      text.slice(text.indexOf("Output:\n") + 8),
      "Warning: truncated output (original token count: 14)\nTotal output lines: 1\n\ntoken on…10 tokens truncated…ken five",
    );
  });

  it("rewrites our retention marker into Codex's and uses the call's own token count, as Codex's omission test expects", () => {
    const output = `HEAD-${"a".repeat(100)}${omissionMarker(123_456)}TAIL-${"z".repeat(100)}`;
    const text = codexResultText({ ...base, originalTokenCount: 42_000, output, omittedBytes: 123_456, maxOutputTokens: 4 });
    assert.ok(
      text.startsWith("Chunk ID: abc123\nWall time: 1.2500 seconds\nProcess exited with code 0\nOriginal token count: 42000\nOutput:\n"),
    );
    assert.ok(text.includes("Warning: truncated output (original token count: 42000)"));
    assert.equal(text.split("... 123456 bytes omitted ...").length - 1, 1);
    assert.ok(!text.includes("bytes omitted here"), "our own marker is gone");
    // Within the budget the output reads exactly as Codex's buffer would have produced it.
    const whole = codexResultText({ ...base, output, omittedBytes: 123_456 });
    assert.ok(whole.endsWith(`Output:\nHEAD-${"a".repeat(100)}\n... 123456 bytes omitted ...\nTAIL-${"z".repeat(100)}`));
  });

  it("writes the running form with the session id and no exit line", () => {
    const text = codexResultText({ chunkId: "3fa91c", wallMs: 512.3, sessionId: 48213, originalTokenCount: 0, output: "" });
    assert.equal(
      text,
      "Chunk ID: 3fa91c\nWall time: 0.5123 seconds\nProcess running with session ID 48213\nOriginal token count: 0\nOutput:\n",
    );
  });

  it("reports a missing exit code as -1 and leaves out an empty chunk id", () => {
    assert.equal(
      codexHeader({ chunkId: "", wallMs: 0, exitCode: null, originalTokenCount: 3 }),
      "Wall time: 0.0000 seconds\nProcess exited with code -1\nOriginal token count: 3\nOutput:",
    );
  });

  it("prints wall time with exactly four decimals", () => {
    assert.deepEqual([0, 0.04, 0.05, 1250, 1234.56, 999.99, 59_999.96, 123_456_789, -5, Number.NaN].map(codexWallTime), [
      "0.0000",
      "0.0000",
      "0.0001",
      "1.2500",
      "1.2346",
      "1.0000",
      "60.0000",
      "123456.7890",
      "0.0000",
      "0.0000",
    ]);
  });

  it("caps max_output_tokens at Codex's 10 000 and defaults to it", () => {
    assert.deepEqual(
      [undefined, 1, 4, 9_999, 10_000, 20_000, 0, -1, 2.9].map(codexTokenBudget),
      [10_000, 1, 4, 9_999, 10_000, 10_000, 0, 10_000, 2],
    );
    const big = "y".repeat(100_000);
    const text = codexResultText({ ...base, output: big, maxOutputTokens: 50_000 });
    assert.ok(text.includes("…15000 tokens truncated…"));
  });

  it("puts our notes as Warning lines at the top of the output, outside the budget, one line each", () => {
    const text = codexResultText({ ...base, output: LONG, maxOutputTokens: 5, notes: ["the user stopped this process", "two\nlines"] });
    assert.ok(
      text.endsWith(
        "Output:\nWarning: the user stopped this process\nWarning: two\\nlines\nWarning: truncated output (original token count: 15)\nTotal output lines: 1\n\nthis is an…10 tokens truncated… truncated",
      ),
    );
  });

  it("keeps a megabyte of output to Codex's budget quickly", () => {
    const output = `${"0123456789\n".repeat(100_000)}`;
    const started = performance.now();
    const text = codexResultText({ ...base, output, originalTokenCount: tokensForBytes(Buffer.byteLength(output)) });
    assert.ok(Buffer.byteLength(text) < 40_300);
    assert.ok(text.includes("Total output lines: 100000"));
    assert.ok(performance.now() - started < 2_000, "linear in the output");
  });

  it("makes six-hex-digit chunk ids", () => {
    const ids = new Set(Array.from({ length: 200 }, codexChunkId));
    for (const id of ids) assert.match(id, /^[0-9a-f]{6}$/);
    assert.ok(ids.size > 190);
  });
});

describe("Codex notes and its unknown-id error", () => {
  it("keeps only the facts the model must read, once each", () => {
    assert.deepEqual(codexNotes({}), []);
    assert.deepEqual(codexNotes({ completion_notification: "armed" }), []);
    assert.deepEqual(codexNotes({ killed_by: "deadline" }), ["the process was stopped at its timeout_s deadline"]);
    assert.deepEqual(
      codexNotes({ killed_by: "quota", failure_message: "stopped because its log reached the quota (PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop)" }),
      ["stopped because its log reached the quota (PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop)"],
    );
    assert.deepEqual(
      codexNotes(
        {
          killed_by: "user",
          failure_message: "stdin is full: 10 bytes of this input were refused",
          completion_notification: "armed, but in this print/JSON run it can only arrive while the run is still going",
          notice: "bash was not found; sh runs the command",
          warning: "61 of 64 job slots are in use",
        },
        { cancelled: true },
      ),
      [
        "this call was cancelled; nothing was read and the process is as it was",
        "the user stopped this process",
        "stdin is full: 10 bytes of this input were refused",
        "on_exit wake armed, but in this print/JSON run it can only arrive while the run is still going",
        "bash was not found; sh runs the command",
        "61 of 64 job slots are in use",
      ],
    );
  });

  it("words an unknown id as Codex does", () => {
    assert.equal(codexUnknownJobError(48213), "write_stdin failed: Unknown process id 48213");
  });
});
