/**
 * Codex's format (`PI_UNIFIED_EXEC_FORMAT=codex`) carries the same news as ours, as `Warning:` lines
 * before the output: the shell's exit with what it left running (only when that is news), what a
 * person typed into the job (a count, never the bytes) or disarmed, and matching lines its head and
 * tail cut from the output (`pattern_matched_unshown`), which never wake later. Results as the tools
 * write them, and one real job through a runtime.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import { omissionMarker } from "../../../src/core/index.ts";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { codexOmissionMarker, codexShownLines } from "../../../src/pi/results/codex.ts";
import { jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { jobReport, type ReportParts } from "../../helpers/reports.ts";
import { pollInTheSameRun, runtimeWithWakes, scratchDirectory, shutDownAfter, wakesSettled } from "../../helpers/runtime.ts";

const CWD = "/home/you/project";
const report = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: { jobId: 3, command: "make serve", cwd: CWD, outputReads: 2 },
      window: { ms: 10_000 },
      waitEnd: "deadline",
      wallMs: 1_004,
      output: { text: "", omittedBytes: 0, printed: { bytes: 0, lines: 0 } },
    },
    over,
  );
const codex = (over: ReportParts = {}, maxOutputTokens?: number) =>
  jobResult(report(over), { piCwd: CWD, format: "codex", maxOutputTokens });
const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const structuredOf = (result: { structuredContent?: unknown }) => result.structuredContent as Record<string, unknown>;
/** The `Warning:` lines of our notes (Codex's own truncation warning aside). */
const warnings = (text: string) =>
  text.split("\n").filter((line) => line.startsWith("Warning: ") && !line.startsWith("Warning: truncated output"));

const server = { pids: [4242], named: [{ pid: 4242, command: "python3 -m http.server" }] };

describe("Codex's format: the shell's exit and what runs on", () => {
  const shellExited = { job: { shellExit: { code: 0, signal: null }, background: server }, waitEnd: "background" as const };

  it("says it in the result that saw it, in one line, with what stops them", () => {
    const result = codex({ ...shellExited, backgroundChanged: true });
    assert.deepEqual(warnings(textOf(result)), [
      "Warning: the shell exited with code 0; 1 process still runs: python3 -m http.server (pid 4242); kill_session stops it",
    ]);
    assert.match(textOf(result), /\nProcess running with session ID 3\n/);
    assert.equal(structuredOf(result).shell_exit_code, 0);
    assert.ok(Value.Check(jobResultSchema, structuredOf(result)));
  });

  it("says nothing of it again while the set is the same; structuredContent still has it", () => {
    const result = codex(shellExited);
    assert.deepEqual(warnings(textOf(result)), []);
    assert.match(String(structuredOf(result).background), /http\.server/);
  });

  it("a job that ended with its background says only Codex's exit line", () => {
    const result = codex({ job: { shellExit: { code: 0, signal: null }, exit: { exitCode: 0, signal: null } }, backgroundChanged: true });
    assert.deepEqual(warnings(textOf(result)), []);
    assert.match(textOf(result), /\nProcess exited with code 0\n/);
  });
});

describe("Codex's format: what a person did", () => {
  it("says how many bytes the user typed, never which", () => {
    const result = codex({ userInput: { bytes: 12, cancelled: false } });
    assert.deepEqual(warnings(textOf(result)), ["Warning: the user typed 12 bytes into this process (never shown to you)"]);
    assert.equal(structuredOf(result).user_input, "12 bytes");
    const none = codex({ userInput: { bytes: 0, cancelled: true } });
    assert.deepEqual(warnings(textOf(none)), ["Warning: the user typed 0 bytes (cancelled) into this process (never shown to you)"]);
  });

  it("says which wakes the user disarmed", () => {
    const result = codex({ userDisarmed: ["exit_wake", "wake_on_pattern"] });
    assert.deepEqual(warnings(textOf(result)), [
      "Warning: the user disarmed this process's on_exit wake and wake_on_pattern from the sessions picker; it will not wake you",
    ]);
    assert.deepEqual(structuredOf(result).user_disarmed, ["exit_wake", "wake_on_pattern"]);
  });
});

/** `count` numbered lines, `line N` each (7-8 bytes). */
const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i}\n`).join("");

describe("Codex's format: matching lines its cut left out", () => {
  const flood = numbered(2_000); // about 15 KB
  const printed = { bytes: Buffer.byteLength(flood), lines: 2_000 };

  it("counts the lines its head and tail show whole, before and after the middle cut", () => {
    // 400 tokens: the first and the last 800 bytes.
    const shown = codexShownLines(flood, 0, 1_600)!;
    assert.equal(shown.head, flood.slice(0, 800).split("\n").length - 1);
    const tail = flood.slice(-800);
    const cutInTwo = flood[flood.length - 801] !== "\n";
    assert.equal(shown.tail, tail.split("\n").length - 1 - (cutInTwo ? 1 : 0), "a line cut in two is not shown");
    assert.equal(codexShownLines(flood, 0, 100_000), undefined, "within the budget every line is shown");
  });

  it("around the retention's gap: the read's first lines and last lines, the line after the gap not counted", () => {
    const text = `a\nb\n\n${codexOmissionMarker(5_000)}\nrest of a line\nc\nd\n`;
    assert.deepEqual(codexShownLines(text, 5_000, 100_000), { head: 2, tail: 2 });
  });

  it("names a matching line from the cut middle, quoting it, and it never wakes later", () => {
    const result = codex(
      { output: { text: flood, omittedBytes: 0, printed, matched: { lines: [1_000], first: "line 1000", more: 0 } } },
      400,
    );
    assert.deepEqual(warnings(textOf(result)), [
      "Warning: lines matching wake_on_pattern were cut from this output and will not wake you: 1 line, first: line 1000",
    ]);
    assert.equal(structuredOf(result).pattern_matched_unshown, "1 line, first: line 1000");
  });

  it("names nothing for lines in the head or the tail it shows", () => {
    for (const line of [3, 1_998]) {
      const result = codex(
        { output: { text: flood, omittedBytes: 0, printed, matched: { lines: [line], first: `line ${line}`, more: 0 } } },
        400,
      );
      assert.deepEqual(warnings(textOf(result)), [], `line ${line}`);
      assert.equal(structuredOf(result).pattern_matched_unshown, undefined);
    }
  });

  it("counts the cut ones when the first match is shown, without quoting a line the model sees", () => {
    const matched = { lines: [3, 900, 1_100], first: "line 3", more: 0 };
    const result = codex({ output: { text: flood, omittedBytes: 0, printed, matched } }, 400);
    assert.equal(structuredOf(result).pattern_matched_unshown, "2 lines");
  });

  it("names a matching line the retention dropped, even when the text is within the budget", () => {
    const text = `first\n${omissionMarker(9_000)}end\n`;
    const matched = { lines: [500], first: "ERROR in the dropped middle", more: 0 };
    const result = codex({ output: { text, omittedBytes: 9_000, printed: { bytes: 9_010, lines: 1_000 }, matched } });
    assert.equal(structuredOf(result).pattern_matched_unshown, "1 line, first: ERROR in the dropped middle");
  });
});

const keep = shutDownAfter();
const scratch = scratchDirectory("codex-news-");

describe("Codex's format with a real job", () => {
  it("a matching line Codex's cut left out is named by the poll and never wakes", async () => {
    const { runtime, batches } = runtimeWithWakes();
    keep(runtime);
    const printed = join(scratch, "printed");
    const cmd = `sleep 0.5; seq 1 2000; echo 'ERROR disk full'; seq 1 3000; touch ${printed}; sleep 300`;
    const report = await pollInTheSameRun(runtime, cmd, printed);
    const result = jobResult(report, { format: "codex", maxOutputTokens: 1_000 });
    assert.ok(!String(structuredOf(result).output).includes("ERROR"), "cut from the output");
    assert.match(
      textOf(result),
      /\nWarning: lines matching wake_on_pattern were cut from this output and will not wake you: 1 line, first: ERROR disk full\n/,
    );
    runtime.completions.runSettled();
    await wakesSettled(runtime);
    assert.deepEqual(batches, [], "named by the call: no wake");
  });
});
