/**
 * "Shown" is what counts: a line matching a job's wake_on_pattern that a result cut (Pi's cap of
 * 2 000 lines, the retention's dropped middle) is named by that result's header
 * (`pattern_matched_unshown`) and never wakes later; a line a result showed names nothing. Real jobs
 * through a runtime, results as the tools write them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { PrintedTally } from "../../../src/core/output/printed-tally.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { ReadMatches } from "../../../src/core/wake-watch/read-matches.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { unshownMatches } from "../../../src/pi/results/output-cap.ts";
import { headerOf } from "../../helpers/events.ts";
import { pollInTheSameRun, runtimeWithWakes, scratchDirectory, shutDownAfter, wakesSettled } from "../../helpers/runtime.ts";

const keep = shutDownAfter();
const scratch = scratchDirectory("unshown-");

describe("matching lines a result cut", () => {
  it("numbers each read's matching lines, across chunks and past chunks that cannot match", () => {
    const matches = new ReadMatches(compileUntilPattern("ERROR"));
    const tally = new PrintedTally(); // the read's own count of its lines, as JobOutput keeps it
    const feed = (text: string) => {
      matches.feed(Buffer.from(text), tally.newlines);
      tally.add(Buffer.from(text));
    };
    feed("ok\nfine\nERR");
    feed("OR one\n");
    feed("a\nb\nc\n"); // passed over: no E, R or O
    feed("\x1b[31mERROR two\x1b[0m\n");
    assert.deepEqual(matches.take(), { lines: [2, 6], first: "ERROR one", more: 0 });
    matches.feed(Buffer.from("x\nERROR three\n"), 0);
    assert.deepEqual(matches.take(), { lines: [1], first: "ERROR three", more: 0 }, "the next read counts from its own start");
    assert.equal(matches.take(), undefined);
  });

  it("numbers printable chunks (decoded once) as it numbers chunks with controls (rendered line by line)", () => {
    const lines = ["ok", "ERROR\tone", "fine", "x ERROR two", "done"];
    const numbered = (text: string) => {
      const matches = new ReadMatches(compileUntilPattern("ERROR\\t|ERROR two"));
      matches.feed(Buffer.from(text), 0);
      return matches.take();
    };
    const printable = numbered(`${lines.join("\n")}\n`);
    assert.deepEqual(printable, { lines: [1, 3], first: "ERROR\tone", more: 0 });
    // A BEL in a line that cannot match sends the chunk down the rendering path: the same lines, the same text.
    assert.deepEqual(numbered(`${lines.join("\n").replace("fine", "fi\x07ne")}\n`), printable);
    // A control inside a matching line is rendered away before the test, as the model reads it.
    assert.deepEqual(numbered("ok\nERR\x07OR\tone\n"), { lines: [1], first: "ERROR\tone", more: 0 });
  });

  it("names the lines before the shown tail, with a count, in one line of at most 300 characters", () => {
    assert.equal(unshownMatches({ lines: [4, 2500], first: "ERROR disk full", more: 0 }, 3000, 2000), "1 line, first: ERROR disk full");
    assert.equal(unshownMatches({ lines: [4, 5], first: "ERROR a", more: 0 }, 3000, 2000), "2 lines, first: ERROR a");
    assert.equal(unshownMatches({ lines: [2500], first: "ERROR shown", more: 0 }, 3000, 2000), undefined);
    const long = unshownMatches({ lines: [0], first: `ERROR ${"x".repeat(400)}`, more: 0 }, 3000, 2000)!;
    assert.ok(`pattern_matched_unshown: ${long}`.length <= 300);
  });

  it("a matching line the cap cut is named by the poll's header and never wakes; a shown one names nothing", async () => {
    const { runtime, batches } = runtimeWithWakes();
    keep(runtime);
    const printed = join(scratch, "printed");
    const cmd = `sleep 0.5; echo 'ERROR disk full'; seq 1 3000; echo 'ERROR shown at the end'; touch ${printed}; sleep 300`;
    const report = await pollInTheSameRun(runtime, cmd, printed);
    const result = jobResult(report);
    const text = result.content[0]!.type === "text" ? result.content[0]!.text : "";
    assert.equal(headerOf(text).pattern_matched_unshown, "1 line, first: ERROR disk full");
    assert.equal((result.structuredContent as Record<string, unknown>).pattern_matched_unshown, "1 line, first: ERROR disk full");
    runtime.completions.runSettled();
    await wakesSettled(runtime);
    assert.deepEqual(batches, [], "named by the call: no wake");
  });
});
