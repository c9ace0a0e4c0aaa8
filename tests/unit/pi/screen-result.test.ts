/**
 * Results that show a PTY's screen (job-result.ts) and the human's view of a job (job-view.ts): the
 * screen as the output, `view` and `cursor` in the text, `structuredContent` (checked against the
 * schema) and `details`, `output_at` pointing at the screen, the cap and its footer on the largest screen, and the
 * view's title and lines.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_MAX_BYTES, initTheme, type Theme } from "@earendil-works/pi-coding-agent";
import { Value } from "typebox/value";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import type { ScreenView } from "../../../src/core/screen/job-screen.ts";
import { jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { writeStdinRenderer } from "../../../src/pi/tui/render.ts";
import { viewLines } from "../../../src/pi/tui/sessions-command.ts";
import { jobReport, type ReportParts, snapshot } from "../../helpers/reports.ts";

const screen = (over: Partial<ScreenView> = {}): ScreenView => ({
  lines: ["alpha", "beta", "~", "~", '"notes.txt" 2L, 11B'],
  cursor: { row: 1, col: 1 },
  alternate: true,
  repainting: false,
  cols: 80,
  rows: 5,
  ...over,
});

const report = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: { jobId: 3, command: "vim notes.txt", cwd: "/work", tty: true, terminal: { cols: 80, rows: 5 }, logPath: "/tmp/x/job-3.log" },
      window: { ms: 250 },
      waitEnd: "deadline",
      wallMs: 251,
      output: { text: "\u001b-ish stream garbage\n", omittedBytes: 0 },
    },
    over,
  );

const textOf = (result: ReturnType<typeof jobResult>) => (result.content[0] as { text: string }).text;
const header = (text: string) => text.slice(0, text.indexOf("\n---\n"));

describe("a result that shows the screen", () => {
  it("puts the screen's rows where the output goes, with view and cursor in the header", () => {
    const result = jobResult(report({ screen: screen({ cursor: { row: 2, col: 4 } }) }));
    const text = textOf(result);
    assert.match(header(text), /\nview: screen \(alternate screen\)\ncursor: 2,4(\n|$)/);
    assert.equal(text.slice(text.indexOf("\n---\n") + 5), 'alpha\nbeta\n~\n~\n"notes.txt" 2L, 11B');
    const details = result.details!;
    assert.equal(details.view, "screen (alternate screen)");
    assert.equal(details.cursor, "2,4");
    const [start, end] = details.output_at!;
    assert.equal(text.slice(start, end), 'alpha\nbeta\n~\n~\n"notes.txt" 2L, 11B', "the renderer reads the screen");
    const structured = result.structuredContent as Record<string, unknown>;
    assert.ok(Value.Check(jobResultSchema, structured), [...Value.Errors(jobResultSchema, structured)].map((e) => e.message).join("; "));
    assert.equal(structured.view, "screen (alternate screen)");
    assert.equal(structured.cursor, "2,4");
    assert.equal(structured.output, 'alpha\nbeta\n~\n~\n"notes.txt" 2L, 11B');
    assert.equal(structured.original_token_count, Math.ceil(Buffer.byteLength(structured.output as string) / 4));
  });

  it("says view: screen for the normal screen a call asked for", () => {
    const text = textOf(jobResult(report({ screen: screen({ alternate: false, lines: ["top - 10:00:00 up 1 day"] }) })));
    assert.match(header(text), /\nview: screen\ncursor: 1,1/);
    assert.match(text, /---\ntop - 10:00:00 up 1 day$/);
  });

  it("in Codex's format too, the screen is the output and what the token count counts", () => {
    const result = jobResult(report({ screen: screen() }), { format: "codex" });
    const text = textOf(result);
    assert.ok(text.endsWith('\nOriginal token count: 9\nOutput:\nalpha\nbeta\n~\n~\n"notes.txt" 2L, 11B'), text);
    const [start, end] = result.details!.output_at!;
    assert.equal(text.slice(start, end), 'alpha\nbeta\n~\n~\n"notes.txt" 2L, 11B');
  });

  it("has neither view nor cursor when the result shows the stream", () => {
    const result = jobResult(report());
    assert.doesNotMatch(textOf(result), /\nview: |\ncursor: /);
    assert.equal(result.details!.view, undefined);
    assert.equal((result.structuredContent as Record<string, unknown>).view, undefined);
  });

  it("caps the largest screen (300 rows of 500 columns) like any output: its last 50 KiB, with the footer counting the screen", () => {
    const lines = Array.from({ length: 300 }, (_, row) => `${String(row + 1).padStart(3, "0")}${"x".repeat(497)}`);
    const result = jobResult(report({ screen: screen({ lines, cols: 500, rows: 300, alternate: false }) }));
    const structured = result.structuredContent as { output: string; truncated: boolean };
    assert.equal(structured.truncated, true);
    assert.ok(Buffer.byteLength(structured.output) <= DEFAULT_MAX_BYTES);
    assert.match(structured.output, /\n300x{497}$/, "the bottom rows are kept");
    // The footer counts the screen that was cut (the stream it replaced is the log's).
    assert.match(
      textOf(result),
      /\n\n\[Showing the last \d+ of 300 lines \(150\.3 KB; \d+\.\d KB not shown; 50\.0KB limit\)\. Full output: \/tmp\/x\/job-3\.log\]$/,
    );
    const [start, end] = result.details!.output_at!;
    assert.equal(textOf(result).slice(start, end), structured.output);
    assert.deepEqual(result.details!.truncation?.printed, { bytes: 150_299, lines: 300 });
  });
});

describe("the TUI row of a screen result", () => {
  initTheme();
  const plain = { fg: (_color: string, text: string) => text, bg: (_color: string, text: string) => text, bold: (text: string) => text };
  const context = { args: {}, state: {}, invalidate: () => {}, lastComponent: undefined, executionStarted: true, isError: false };

  it("draws the screen's rows and says in its footer that they are a screen", () => {
    const result = jobResult(report({ screen: screen() }));
    const drawn = writeStdinRenderer
      .renderResult(result, { expanded: true, isPartial: false }, plain as unknown as Theme, { ...context, durationMs: 251 })
      .render(100)
      .map((line) => line.trimEnd());
    // Expanded, the row is the text the model read: its header, `---`, then the screen's rows.
    const rows = drawn.indexOf("---") + 1;
    assert.ok(rows > 0 && drawn.includes("the text the model read:"), drawn.join("\n"));
    assert.deepEqual(drawn.slice(rows, rows + 5), screen().lines);
    assert.match(drawn.at(-1)!, /^yielded 0\.3s · session 3 · screen \(alternate screen\) · log: /);
  });
});

describe("the human's view of a job", () => {
  const job = snapshot({ jobId: 3, command: "vim notes.txt", tty: true });

  it("titles a screen with its size, the cursor and the alternate screen", () => {
    const { title, lines } = viewLines(job, { kind: "screen", screen: screen({ cursor: { row: 2, col: 3 } }) });
    assert.equal(title, "3 · running 0.0s · vim notes.txt — screen 80×5, cursor 2,3 (alternate screen)");
    assert.deepEqual(lines, screen().lines);
  });

  it("titles a pipe job's lines, and says when there is no output yet", () => {
    const pipe = snapshot({ jobId: 4, command: "make" });
    assert.deepEqual(viewLines(pipe, { kind: "output", lines: ["a", "b"] }), {
      title: "4 · running 0.0s · make — the last 2 lines of its output",
      lines: ["a", "b"],
    });
    assert.deepEqual(viewLines(pipe, { kind: "output", lines: [] }).lines, ["(no output yet)"]);
    const ended = snapshot({ jobId: 5, command: "make", elapsedMs: 3_500, exit: { exitCode: 143, signal: null } });
    assert.equal(viewLines(ended, { kind: "output", lines: ["a"] }).title, "5 · exit 143 after 3.5s · make — the last line of its output");
  });
});
