/**
 * A flood's result reads the same whether the runtime decoded the whole read or only what the result
 * shows: the same job run twice, one result built from a whole decode and one from a partial one, in
 * our format (output and footer) and in Codex's (its head and tail around the cut).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import type { ShownPart } from "../../../src/core/output/shown-part.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import type { ResultFormat } from "../../../src/pi/result-format.ts";
import { jobResult, shownPart } from "../../../src/pi/results/job-result.ts";
import { killResult } from "../../../src/pi/results/kill-result.ts";
import { waitFor } from "../../helpers/processes.ts";

const runtime = new ExecRuntime();
after(() => runtime.shutdown());

/** Colored numbered lines, some inside a DCS string that spans lines: `lines` of them, then an exit. */
const flood = (lines: number) =>
  `awk 'BEGIN { for (i = 1; i <= ${lines}; i++) { if (i % 997 == 0) printf "\\033Phidden %d\\n\\033\\\\", i; printf "\\033[3%dmline %d\\033[0m\\n", i % 8, i } }'`;

async function run(command: string, shown: ShownPart | undefined): Promise<JobReport> {
  const request = prepareExec({ cmd: command, yield_time_ms: 20_000 }, process.cwd(), process.env);
  const report = await runtime.exec(shown ? { ...request, shown } : request);
  assert.equal(report.job.exit?.exitCode, 0, "the flood ran to its end");
  return report;
}

/** The model text with what differs between two runs of one job (log path, times, chunk id) made equal. */
function modelText(report: JobReport, format: ResultFormat): string {
  const result = jobResult(report, { format });
  const text = result.content[0]?.type === "text" ? result.content[0].text : "";
  return text.replaceAll(report.job.logPath, "<log>").replace(/(wall_time_seconds|Wall time|Chunk ID)[:=] ?\S+/g, "$1 <varies>");
}

/** Codex's head and tail around its mark (the mark's count is of raw bytes when the middle was not decoded). */
function codexEnds(text: string): [string, string] {
  const mark = /…\d+ tokens truncated…/.exec(text);
  assert.ok(mark, "Codex's cut");
  return [
    text.slice(0, mark.index).replace(/original token count: \d+|Total output lines: \d+/g, ""),
    text.slice(mark.index + mark[0].length),
  ];
}

describe("a flood's result from a partial decode", () => {
  for (const [name, lines] of [
    ["a read within retention", 20_000],
    ["a read past a retention gap", 120_000],
  ] as const) {
    it(`is the result a whole decode gives, in our format (${name})`, async () => {
      const whole = await run(flood(lines), undefined);
      const part = await run(flood(lines), shownPart("default"));
      assert.ok(part.output.elided, "the runtime decoded only a part");
      assert.equal(whole.output.elided, undefined);
      assert.equal(modelText(part, "default"), modelText(whole, "default"));
      assert.match(modelText(part, "default"), new RegExp(`line ${lines}\\n\\n\\[Showing the last 2000 of \\d+ lines`));
    });

    it(`has Codex's head and tail of a whole decode (${name})`, async () => {
      const whole = await run(flood(lines), undefined);
      const part = await run(flood(lines), shownPart("codex"));
      assert.ok(part.output.elided, "the runtime decoded only a part");
      assert.deepEqual(codexEnds(modelText(part, "codex")), codexEnds(modelText(whole, "codex")));
    });
  }

  it("is the result a whole decode gives for a line of unterminated OSCs with no LF (decoded from mid-line), in both formats", async () => {
    const line = `awk 'BEGIN { for (i = 1; i <= 60000; i++) printf "\\033]0;t%d", i }'`;
    const whole = await run(line, undefined);
    const part = await run(line, shownPart("default"));
    assert.ok(part.output.elided, "the runtime decoded only a part");
    assert.equal(modelText(part, "default"), modelText(whole, "default"));
    // Codex's head is rendered line by line, so a read with no LF is rendered whole for it: the same text.
    const codex = await run(line, shownPart("codex"));
    assert.deepEqual(codexEnds(modelText(codex, "codex")), codexEnds(modelText(whole, "codex")));
  });

  it("in a kill's result, cut with a footer that counts what the job printed, not the part decoded", async () => {
    const request = prepareExec({ cmd: "sleep 1; seq 1 300000; exec sleep 30", yield_time_ms: 250 }, process.cwd(), process.env);
    const started = await runtime.exec(request);
    assert.equal(started.output.text, "", "the first window ends before seq starts");
    const job = runtime.jobs().find((candidate) => candidate.id === started.job.jobId);
    assert.ok(job, "still running");
    await waitFor(() => job.outputBytesTotal >= 1_988_895, "all of seq's output");
    const report = await runtime.kill(job.id, "SIGKILL", undefined, "model", shownPart("default"));
    assert.ok(report.output.elided, "the runtime decoded only a part");
    const [content] = killResult(report).content;
    assert.match(
      content?.type === "text" ? content.text : "",
      /\n299999\n300000\n\n\[Showing the last 2000 of 300000 lines \(2\.0 MB; \d\.\d MB not shown\)\. Full output: /,
    );
  });

  it("is not taken for a small read: the text is the whole read", async () => {
    const report = await run(flood(200), shownPart("default"));
    assert.equal(report.output.elided, undefined);
    assert.match(report.output.text, /^line 1\nline 2\n/);
  });
});
