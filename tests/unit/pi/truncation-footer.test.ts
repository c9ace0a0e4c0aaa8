import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { truncateTail } from "@earendil-works/pi-coding-agent";
import { HeadTailBuffer } from "../../../src/core/output/head-tail-buffer.ts";
import { OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { capOutput, notShownBytes, notShownSummary, shownBy, truncationFooter } from "../../../src/pi/results/output-cap.ts";

const LOG = "/tmp/pi-unified-exec-Xa1b2c/3.log";
const MiB = 1024 * 1024;
/** `seq 1 2000000`: 14 888 896 bytes. */
const SEQ_BYTES = 9 * 2 + 90 * 3 + 900 * 4 + 9_000 * 5 + 90_000 * 6 + 900_000 * 7 + 1_000_001 * 8;

describe("honest truncation footer", () => {
  it("counts what a 2 000 000-line flood printed, not what retention kept", () => {
    const footer = truncationFooter({ lines: 2_000_000, bytes: SEQ_BYTES }, { lines: 2_000, bytes: 15_999, lastLinePartial: false }, LOG);
    assert.equal(footer, `[Showing the last 2000 of 2000000 lines (14.9 MB; 14.9 MB not shown). Full output: ${LOG}]`);
  });

  it("names the byte limit when bytes, not lines, were the limit", () => {
    const text = Array.from({ length: 600 }, (_, i) => `${i}`.padEnd(99, ".")).join("\n");
    const shown = shownBy(truncateTail(text));
    assert.equal(
      truncationFooter({ lines: 600_000, bytes: 60_000_000 }, shown, LOG),
      `[Showing the last ${shown.lines} of 600000 lines (60.0 MB; 59.9 MB not shown; 50.0KB limit). Full output: ${LOG}]`,
    );
  });

  it("says how much of one long line is shown, in Pi's words, and the totals when more was printed", () => {
    const shown = { lines: 1, bytes: 51_200, lastLinePartial: true, limitBytes: 51_200 };
    assert.equal(
      truncationFooter({ lines: 1, bytes: 3 * MiB, lastLineBytes: 3 * MiB }, shown, LOG),
      `[Showing last 50.0KB of line 1 (line is 3.1 MB). Full output: ${LOG}]`,
    );
    assert.equal(
      truncationFooter({ lines: 40, bytes: 14 * MiB, lastLineBytes: 3 * MiB }, shown, LOG),
      `[Showing last 50.0KB of line 40 (line is 3.1 MB; 14.7 MB printed, 14.6 MB not shown). Full output: ${LOG}]`,
    );
    assert.equal(
      truncationFooter({ lines: 40, bytes: 14 * MiB }, shown, LOG),
      `[Showing last 50.0KB of line 40 (14.7 MB printed, 14.6 MB not shown). Full output: ${LOG}]`,
    );
  });

  it("never claims fewer lines or bytes printed than shown", () => {
    const footer = truncationFooter({ lines: 3, bytes: 10 }, { lines: 5, bytes: 400, lastLinePartial: false }, LOG);
    assert.equal(footer, `[Showing the last 5 of 5 lines (400 B; 0 B not shown). Full output: ${LOG}]`);
    assert.equal(notShownBytes({ lines: 3, bytes: 10 }, { lines: 5, bytes: 400, lastLinePartial: false }), 0);
  });

  it("gives the TUI a one-line summary of the cut", () => {
    const summary = notShownSummary({ lines: 2_000_000, bytes: SEQ_BYTES }, { lines: 2_000, bytes: 15_999, lastLinePartial: false });
    assert.equal(summary, "14.9 MB not shown, full output in the log");
  });

  it("reads Pi's truncation result as what is shown", () => {
    const truncation = truncateTail("a\nb\nc\n", { maxLines: 2 });
    assert.deepEqual(shownBy(truncation), { lines: 2, bytes: 3, lastLinePartial: false });
    assert.deepEqual(shownBy(truncateTail("x".repeat(100), { maxBytes: 10 })), {
      lines: 1,
      bytes: 10,
      lastLinePartial: true,
      limitBytes: 10,
    });
  });

  it("is right for a real `seq 1 2000000` read through the job's retention buffer and decoder", async () => {
    for (let run = 0; run < 3; run++) {
      // What the runtime does with a pipe job's output, and the counts it keeps beside it.
      const retained = new HeadTailBuffer();
      const printed = { lines: 0, bytes: 0 };
      let last = 0x0a;
      const child = spawn("seq", ["1", "2000000"], { stdio: ["ignore", "pipe", "inherit"] });
      child.stdout.on("data", (chunk: Buffer) => {
        retained.push(chunk);
        printed.bytes += chunk.length;
        for (const byte of chunk) if (byte === 0x0a) printed.lines++;
        last = chunk[chunk.length - 1]!;
      });
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      assert.equal(code, 0);
      if (last !== 0x0a) printed.lines++;
      assert.deepEqual(printed, { lines: 2_000_000, bytes: SEQ_BYTES });

      const { text } = new OutputDecoder().take(retained.drain(), true);
      const capped = capOutput(text, printed, LOG);
      assert.ok(capped.content.startsWith("1998001\n") && capped.content.endsWith("\n2000000"));
      assert.ok(capped.shown.endsWith(`\n\n[Showing the last 2000 of 2000000 lines (14.9 MB; 14.9 MB not shown). Full output: ${LOG}]`));
      // What the old footer would have said: the retained megabyte's line count.
      assert.ok(capped.truncation.totalLines < 160_000);
    }
  });
});
