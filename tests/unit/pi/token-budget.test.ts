import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { capOutputToBudget, outputByteBudget } from "../../../src/pi/results/token-budget.ts";

const LOG = "/tmp/pi-unified-exec-Xa1b2c/3.log";
const lines = (count: number, width = 10) => Array.from({ length: count }, (_, i) => `${i + 1}`.padStart(width, "0")).join("\n");

describe("max_output_tokens in our format", () => {
  it("allows 4 bytes a token, never more than the usual 50 KiB", () => {
    assert.deepEqual(
      [undefined, 1, 100, 1.9, 12_800, 12_801, 1_000_000, 0, Number.NaN].map(outputByteBudget),
      [51_200, 4, 400, 4, 51_200, 51_200, 51_200, 4, 51_200],
    );
  });

  it("without a budget, cuts as Pi's bash tool does: the last 2 000 lines within 50 KiB, in Pi's words", () => {
    for (const text of ["", "ok\n"])
      assert.deepEqual([capOutputToBudget(text, LOG).shown, capOutputToBudget(text, LOG).truncation.truncated], [text, false]);
    const byLines = capOutputToBudget(lines(3_000), LOG);
    assert.equal(byLines.content, lines(3_000).split("\n").slice(-2_000).join("\n"));
    assert.ok(byLines.shown.endsWith(`\n\n[Showing lines 1001-3000 of 3000. Full output: ${LOG}]`));
    const byBytes = capOutputToBudget(lines(200, 400), LOG);
    assert.equal(byBytes.truncation.truncatedBy, "bytes");
    assert.ok(Buffer.byteLength(byBytes.content) <= 51_200);
    assert.ok(byBytes.shown.endsWith(`of 200 (50.0KB limit). Full output: ${LOG}]`));
    const oneLongLine = capOutputToBudget(`head\n${"x".repeat(80_000)}`, LOG);
    assert.ok(oneLongLine.shown.endsWith(`[Showing last 50.0KB of line 2 (line is 78.1KB). Full output: ${LOG}]`));
  });

  it("keeps the end of the output within the budget and names the limit that applied", () => {
    const text = lines(1_000);
    const capped = capOutputToBudget(text, LOG, 100);
    assert.ok(Buffer.byteLength(capped.content) <= 400);
    assert.equal(capped.content, lines(1_000).split("\n").slice(-36).join("\n"));
    assert.equal(capped.shown, `${capped.content}\n\n[Showing lines 965-1000 of 1000 (400B limit). Full output: ${LOG}]`);
    assert.equal(capped.truncation.truncatedBy, "bytes");
  });

  it("keeps the 2 000-line cap under a large budget", () => {
    const capped = capOutputToBudget(lines(5_000, 3), LOG, 12_000);
    assert.equal(capped.truncation.outputLines, 2_000);
    assert.ok(capped.shown.endsWith(`[Showing lines 3001-5000 of 5000. Full output: ${LOG}]`));
  });

  it("leaves output within the budget whole, with no footer", () => {
    const capped = capOutputToBudget("short\n", LOG, 2);
    assert.deepEqual([capped.shown, capped.truncation.truncated], ["short\n", false]);
  });

  it("shows the end of one line longer than the budget, in Pi's partial-line words", () => {
    const capped = capOutputToBudget(`${"a".repeat(1_000)}\n`, LOG, 10);
    assert.equal(capped.content, "a".repeat(40));
    assert.ok(capped.shown.endsWith(`[Showing last 40B of line 1 (line is 1001B). Full output: ${LOG}]`));
  });

  it("takes another footer when asked", () => {
    const capped = capOutputToBudget(lines(100), LOG, 10, (truncation, limit) => `[${truncation.outputLines} lines, ${limit} bytes]`);
    assert.ok(capped.shown.endsWith("\n\n[3 lines, 40 bytes]"));
  });
});
