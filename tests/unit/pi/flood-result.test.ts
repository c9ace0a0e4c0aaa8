/**
 * A flood's result reads as if the runtime had rendered all of it, though it renders a large read at
 * its ends only: a real job's report, and the same report with its output replaced by the whole
 * render of the bytes the job printed (its log, retained as the job retains them), give the same text
 * in our format (output and footer) and in Codex's the same head and tail around the cut (the middle
 * left out is counted in raw bytes, which the marks' counts show).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { HeadTailBuffer, omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import type { ResultFormat } from "../../../src/pi/result-format.ts";
import { withCodexOmission } from "../../../src/pi/results/codex.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { killResult } from "../../../src/pi/results/kill-result.ts";
import { waitFor } from "../../helpers/processes.ts";

const runtime = new ExecRuntime();
/** Half of what a job retains between reads: its head, and its tail. */
const HALF = 512 * 1024;
after(() => runtime.shutdown());

/** Colored numbered lines, some inside a DCS string that spans lines: `lines` of them, then an exit. */
const flood = (lines: number) =>
  `awk 'BEGIN { for (i = 1; i <= ${lines}; i++) { if (i % 997 == 0) printf "\\033Phidden %d\\n\\033\\\\", i; printf "\\033[3%dmline %d\\033[0m\\n", i % 8, i } }'`;

async function run(command: string): Promise<JobReport> {
  const report = await runtime.exec(prepareExec({ cmd: command, yield_time_ms: 20_000 }, process.cwd(), process.env));
  assert.equal(report.job.exit?.exitCode, 0, "the flood ran to its end");
  return report;
}

/** The report as a whole render would give it: the job's log, retained in one read as the job retains it, rendered all at once. */
function renderedWhole(report: JobReport): JobReport {
  const buffer = new HeadTailBuffer();
  buffer.push(readFileSync(report.job.logPath));
  const { head, tail, omittedBytes } = buffer.drain();
  const utf8 = (bytes: Buffer) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  const text =
    omittedBytes > 0
      ? renderTerminalText(`${utf8(head)}${omissionMarker(omittedBytes)}${utf8(tail.subarray(continuationPrefix(tail)))}`)
      : renderTerminalText(utf8(head));
  const { elided: _elided, ...output } = report.output;
  return { ...report, output: { ...output, text } };
}

/** Codex's head and tail around its mark, without the counts. */
function codexEnds(text: string): [string, string] {
  const mark = /…\d+ tokens truncated…/.exec(text);
  assert.ok(mark, "Codex's cut");
  return [
    text.slice(0, mark.index).replace(/original token count: \d+|Total output lines: \d+|Chunk ID: \w+/g, ""),
    text.slice(mark.index + mark[0].length),
  ];
}

/** The model text, its chunk id made equal between two builds. */
function modelText(report: JobReport, format: ResultFormat): string {
  const result = jobResult(report, { format });
  const text = result.content[0]?.type === "text" ? result.content[0].text : "";
  return text.replace(/(Chunk ID)[:=] ?\S+/g, "$1 <varies>");
}

describe("Codex's head of a read past a retention gap", () => {
  it("is the whole render's when the head renders to nothing and Codex's shorter omission line replaces ours", () => {
    const head = "\x1b[m".repeat(Math.ceil(HALF / 3)).slice(0, HALF); // renders to nothing
    const ours = Buffer.byteLength(omissionMarker(5_000));
    // Just enough text after our marker for 20 000 bytes of ours, and fewer once Codex's line replaces it.
    const lines = "x"
      .repeat(9)
      .concat("\n")
      .repeat(Math.ceil((20_000 - ours + 10) / 10));
    const rest = `${"\x1b[m".repeat(10_000)}\n${"middle line\n".repeat(30_000)}${"end line\n".repeat(30_000)}`;
    const buffer = new HeadTailBuffer();
    buffer.push(Buffer.from(`${head}${"m".repeat(5_000)}${lines}${rest}`.slice(0, 2 * HALF + 5_000)));
    const retained = buffer.drain();
    assert.equal(retained.omittedBytes, 5_000);
    const ends = new OutputDecoder().take(retained, true);
    assert.ok(ends.elided, "rendered at its ends");
    const whole = renderTerminalText(`${omissionMarker(5_000)}${retained.tail.toString()}`);
    const codexHead = (text: string) => Buffer.from(withCodexOmission(text, 5_000)).subarray(0, 20_000).toString();
    assert.equal(codexHead(ends.text), codexHead(whole));
  });
});

describe("a flood's result", () => {
  for (const [name, lines] of [
    ["a read within retention", 20_000],
    ["a read past a retention gap", 120_000],
  ] as const) {
    it(`is the result of a whole render, in our format and in Codex's (${name})`, async () => {
      const report = await run(flood(lines));
      assert.ok(report.output.elided, "the runtime rendered its ends only");
      assert.equal(modelText(report, "default"), modelText(renderedWhole(report), "default"));
      assert.deepEqual(codexEnds(modelText(report, "codex")), codexEnds(modelText(renderedWhole(report), "codex")));
      assert.match(modelText(report, "default"), new RegExp(`line ${lines}\\n\\n\\[Showing the last 2000 of \\d+ lines`));
    });
  }

  it("in a kill's result, is cut with a footer that counts what the job printed, not what was rendered", async () => {
    const request = prepareExec({ cmd: "sleep 1; seq 1 300000; exec sleep 30", yield_time_ms: 250 }, process.cwd(), process.env);
    const started = await runtime.exec(request);
    assert.equal(started.output.text, "", "the first window ends before seq starts");
    const job = runtime.jobs().find((candidate) => candidate.id === started.job.jobId);
    assert.ok(job, "still running");
    await waitFor(() => job.outputBytesTotal >= 1_988_895, "all of seq's output");
    const report = await runtime.kill(job.id, "SIGKILL", undefined, "model");
    assert.ok(report.output.elided, "the runtime rendered its ends only");
    const [content] = killResult(report).content;
    assert.match(
      content?.type === "text" ? content.text : "",
      /\n299999\n300000\n\n\[Showing the last 2000 of 300000 lines \(2\.0 MB; \d\.\d MB not shown\)\. Full output: /,
    );
  });

  it("of a small read is the whole read", async () => {
    const report = await run(flood(200));
    assert.equal(report.output.elided, undefined);
    assert.match(report.output.text, /^line 1\nline 2\n/);
  });
});
