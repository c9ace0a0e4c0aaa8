import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { capOutput, outputByteBudget, printedOf } from "../../../src/pi/results/output-cap.ts";

const LOG = "/tmp/pi-unified-exec-Xa1b2c/3.log";
const lines = (count: number, width = 10) => Array.from({ length: count }, (_, i) => `${i + 1}`.padStart(width, "0")).join("\n");
/** `text` capped as a call that printed exactly it. */
const cap = (text: string, maxOutputTokens?: number) => capOutput(text, printedOf({ text, omittedBytes: 0 }), LOG, maxOutputTokens);

describe("max_output_tokens in our format", () => {
  it("allows 4 bytes a token, never more than the usual 50 KiB", () => {
    assert.deepEqual(
      [undefined, 1, 100, 1.9, 12_800, 12_801, 1_000_000, 0, Number.NaN].map(outputByteBudget),
      [51_200, 4, 400, 4, 51_200, 51_200, 51_200, 4, 51_200],
    );
  });

  it("without a budget, cuts as Pi's bash tool does: the last 2 000 lines within 50 KiB, Pi's limit in Pi's words", () => {
    for (const text of ["", "ok\n"]) assert.deepEqual([cap(text).shown, cap(text).truncation.truncated], [text, false]);
    const byLines = cap(lines(3_000));
    assert.equal(byLines.content, lines(3_000).split("\n").slice(-2_000).join("\n"));
    assert.ok(byLines.shown.endsWith(`\n\n[Showing the last 2000 of 3000 lines (33.0 KB; 11.0 KB not shown). Full output: ${LOG}]`));
    const byBytes = cap(lines(200, 400));
    assert.equal(byBytes.truncation.truncatedBy, "bytes");
    assert.ok(Buffer.byteLength(byBytes.content) <= 51_200);
    assert.ok(byBytes.shown.endsWith(`of 200 lines (80.2 KB; 29.3 KB not shown; 50.0KB limit). Full output: ${LOG}]`));
    const oneLongLine = cap(`head\n${"x".repeat(80_000)}`);
    assert.ok(oneLongLine.shown.endsWith(`[Showing last 50.0KB of line 2 (80.0 KB printed, 28.8 KB not shown). Full output: ${LOG}]`));
  });

  it("keeps the end of the output within the budget and names the limit that applied", () => {
    const capped = cap(lines(1_000), 100);
    assert.ok(Buffer.byteLength(capped.content) <= 400);
    assert.equal(capped.content, lines(1_000).split("\n").slice(-36).join("\n"));
    assert.equal(
      capped.shown,
      `${capped.content}\n\n[Showing the last 36 of 1000 lines (11.0 KB; 10.6 KB not shown; 400B limit). Full output: ${LOG}]`,
    );
    assert.equal(capped.truncation.truncatedBy, "bytes");
  });

  it("keeps the 2 000-line cap under a large budget", () => {
    const capped = cap(lines(5_000, 3), 12_000);
    assert.equal(capped.truncation.outputLines, 2_000);
    assert.ok(capped.shown.endsWith(`[Showing the last 2000 of 5000 lines (24.0 KB; 14.0 KB not shown). Full output: ${LOG}]`));
  });

  it("leaves output within the budget whole, with no footer", () => {
    const capped = cap("short\n", 2);
    assert.deepEqual([capped.shown, capped.truncation.truncated], ["short\n", false]);
  });

  it("shows the end of one line longer than the budget, in Pi's partial-line words", () => {
    const capped = cap(`${"a".repeat(1_000)}\n`, 10);
    assert.equal(capped.content, "a".repeat(40));
    assert.ok(capped.shown.endsWith(`[Showing last 40B of line 1 (1.0 KB printed, 961 B not shown). Full output: ${LOG}]`));
  });
});
