/**
 * What is unread, without quoting it (SPEC §3f), on plain data: which lines look like failures (the
 * documented words, any case, never a zero count), counted once per line however the bytes are cut
 * into chunks; and a job's unread tally (lines, bytes, the log lines they span, the first
 * failure-looking line) across reads, a conditional wait's cut included.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { FailureLines, failuresIn } from "../../../src/core/output/failure-lines.ts";
import { PrintedTally } from "../../../src/core/output/printed-tally.ts";

/** Whether one line, alone, looks like a failure. */
const looksLikeFailure = (line: string) => failuresIn(Buffer.from(`${line}\n`)).count === 1;

describe("failure-looking lines", () => {
  it("are lines with error, fail, panic, traceback, exception or fatal, in any case", () => {
    for (const line of [
      "error: cannot find module 'x'",
      "npm ERROR code 1",
      "FAIL src/app.test.ts",
      "Tests: 3 failed, 10 passed",
      "FAILED (failures=2)",
      "# fail 3",
      "failed: 1",
      "thread 'main' panicked at src/main.rs:2:5",
      "Traceback (most recent call last):",
      'Exception in thread "main" java.lang.NullPointerException',
      "fatal: not a git repository",
      "\u001b[31mError\u001b[0m: boom",
    ])
      assert.equal(looksLikeFailure(line), true, line);
  });

  it("are not lines whose only such word is a zero count, or lines without one", () => {
    for (const line of [
      "Tests: 0 failed, 10 passed",
      "0 errors, 0 warnings",
      "# fail 0",
      "failures: 0",
      "errors=0",
      "no errors found",
      "compiled 12 modules in 3.1s",
      "all good",
    ])
      assert.equal(looksLikeFailure(line), false, line);
  });

  it("counts each line once and names the first, whatever chunks the bytes arrive in", () => {
    const lines = ["ok 1", "error one error two", "ok 2", "Tests: 0 failed", "PANIC: three", "ok 3", "a traceback"];
    const text = `${lines.join("\n")}\n`;
    const whole = failuresIn(Buffer.from(text));
    assert.deepEqual(whole, { count: 3, first: 1 });
    for (const size of [1, 2, 3, 5, 7, 13]) {
      const tally = new FailureLines();
      let newlines = 0;
      for (let at = 0; at < text.length; at += size) {
        const chunk = Buffer.from(text.slice(at, at + size));
        tally.add(chunk, newlines);
        newlines += chunk.toString().split("\n").length - 1;
      }
      assert.deepEqual({ count: tally.count, first: tally.first }, whole, `chunks of ${size}`);
    }
  });

  it("a printed tally keeps its failure-looking lines across a merge and a split", () => {
    const first = new PrintedTally();
    first.add(Buffer.from("ok\nok\n"));
    const later = new PrintedTally();
    later.add(Buffer.from("ok\nerror x\n"));
    first.merge(later);
    assert.deepEqual([first.failures.count, first.failures.first], [1, 3]);
    const moved = first.splitOff(9, 2, true, { count: 1, first: 1 });
    assert.deepEqual([moved.failures.count, moved.failures.first], [1, 1]);
    assert.deepEqual([first.failures.count, first.failures.first], [0, -1]);
  });
});

describe("a job's unread tally", () => {
  it("of 5 000 lines with an error at line 1 200: every line unread, and where the error is", () => {
    const output = new JobOutput(0);
    const lines = Array.from({ length: 5_000 }, (_, i) => (i + 1 === 1_200 ? "ERROR: disk full" : `line ${i + 1}`));
    const text = Buffer.from(`${lines.join("\n")}\n`);
    for (let at = 0; at < text.length; at += 4_096) output.push(text.subarray(at, at + 4_096));
    assert.deepEqual(output.unreadTally, {
      lines: 5_000,
      bytes: text.length,
      fromLine: 1,
      toLine: 5_000,
      failures: 1,
      firstFailureLine: 1_200,
    });
  });

  it("counts from the line after the last read, a read that ended mid-line included", () => {
    const output = new JobOutput(0);
    output.push(Buffer.from("a\nb\nFAIL c"));
    output.take(false);
    assert.deepEqual(output.unreadTally, { lines: 0, bytes: 0, fromLine: 3, toLine: 2, failures: 0 });
    output.push(Buffer.from(" more\nd\nerror e\n"));
    assert.deepEqual(output.unreadTally, { lines: 3, bytes: 16, fromLine: 3, toLine: 5, failures: 1, firstFailureLine: 5 });
  });

  it("of a flood far past what is retained, counted as it arrived", () => {
    const output = new JobOutput(0);
    const block = Buffer.from(`${"x".repeat(99)}\n`);
    for (let i = 0; i < 40_000; i++) output.push(i === 30_000 ? Buffer.from("panic: at 30001\n") : block);
    const unread = output.unreadTally;
    assert.equal(unread.lines, 40_000);
    assert.equal(unread.firstFailureLine, 30_001);
    assert.equal(unread.failures, 1);
  });
});
