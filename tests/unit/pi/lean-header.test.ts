/**
 * The lean header (lean-header.ts through jobResult): each field that is in the text only when it
 * carries news, against the same report with and without the news; `structuredContent` and
 * `details` keep every field either way. Then `max_output_tokens` in our format, and the Codex
 * format's text, fields and `output_at`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { codexWallTime } from "../../../src/pi/results/codex.ts";
import { type JobResultExtras, jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { jobReport, type ReportParts } from "../../helpers/reports.ts";

const LOG = "/tmp/pi-unified-exec-Xa1b2c/9.log";
const CWD = "/home/you/project";

/** A later poll of a running job that printed one line, in Pi's own directory. */
const poll = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: { jobId: 9, command: "npm run dev", cwd: CWD, outputBytesTotal: 500, outputReads: 3, quietMs: 40, logPath: LOG },
      window: { ms: 5_000 },
      waitEnd: "deadline",
      wallMs: 5_002,
      output: { text: "GET / 200\n", omittedBytes: 0, printed: { bytes: 10, lines: 1 } },
    },
    over,
  );

const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const result = (over: ReportParts = {}, extras: JobResultExtras = {}) => jobResult(poll(over), { piCwd: CWD, ...extras });
const header = (over: ReportParts = {}, extras: JobResultExtras = {}) => {
  const body = textOf(result(over, extras));
  return body.slice(0, body.indexOf("\n---\n"));
};
const keys = (over: ReportParts = {}, extras: JobResultExtras = {}) =>
  header(over, extras)
    .split("\n")
    .map((line) => line.split(":")[0]);

describe("the lean header", () => {
  it("a later poll that printed something: the status line, session_id and wall time, nothing else", () => {
    assert.equal(header(), "[still running]\nsession_id: 9\nwall_time_seconds: 5.002");
  });

  it("log_path: on the job's first result (cancelled first call included), with the exit, and when output was cut", () => {
    assert.deepEqual(keys({ job: { outputReads: 1 } }), ["[still running]", "session_id", "log_path", "wall_time_seconds"]);
    assert.ok(keys({ job: { outputReads: 0 }, cancelled: true, waitEnd: "aborted" }).includes("log_path"));
    assert.deepEqual(keys({ job: { exit: { exitCode: 0, signal: null } } }), ["[exited]", "exit_code", "log_path", "wall_time_seconds"]);
    const flood = { output: { text: "x\n".repeat(5_000), printed: { bytes: 10_000, lines: 5_000 } } };
    assert.ok(keys(flood).includes("log_path"));
    assert.ok(keys({ output: { omittedBytes: 5 } }).includes("log_path"), "retention dropped bytes");
    assert.ok(keys({ job: { logPartialReason: "ENOSPC" } }).includes("log_path"), "the log is incomplete");
  });

  it("cwd: only where the job runs outside Pi's directory (compared resolved)", () => {
    assert.ok(!keys({}, { piCwd: `${CWD}/` }).includes("cwd"));
    assert.match(header({ job: { cwd: `${CWD}/web` } }), /\ncwd: \/home\/you\/project\/web\n/);
    assert.ok(keys({}, { piCwd: undefined }).includes("cwd"), "without Pi's directory it is said");
  });

  it("original_token_count: only when the output was cut", () => {
    assert.ok(!keys().includes("original_token_count"));
    const cut = header({ output: { text: "y\n".repeat(3_000), printed: { bytes: 6_000_000, lines: 3_000_000 } } });
    assert.match(cut, /\noriginal_token_count: 1500000$/, "of everything printed, dropped bytes included");
  });

  it("quiet_ms: only for a running job that printed nothing in this call", () => {
    assert.match(header({ output: { text: "", printed: { bytes: 0, lines: 0 } } }), /\nquiet_ms: 40$/);
    assert.ok(!keys().includes("quiet_ms"), "it printed");
    assert.ok(
      !keys({ job: { exit: { exitCode: 0, signal: null } }, output: { text: "", printed: { bytes: 0, lines: 0 } } }).includes("quiet_ms"),
    );
    assert.ok(!keys({ cancelled: true, waitEnd: "aborted", output: { text: "" } }).includes("quiet_ms"), "a cancelled call read nothing");
  });

  it("cols and rows: only after a resize or a clamp; tty never", () => {
    const pty = { job: { tty: true, terminal: { cols: 120, rows: 30 } }, terminal: { cols: 120, rows: 30 } };
    assert.deepEqual(keys(pty), ["[still running]", "session_id", "wall_time_seconds"]);
    assert.match(header({ ...pty, terminal: { cols: 90, rows: 20 } }, { resized: true }), /\ncols: 90\nrows: 20$/);
    assert.match(header({ ...pty, terminal: { cols: 500, rows: 30, requestedCols: 900 } }), /\ncols: 500\nrows: 30$/);
  });

  it("chunk_id and output_bytes_total are never in the text; structuredContent and details keep every field", () => {
    const lean = result();
    assert.doesNotMatch(textOf(lean), /chunk_id|output_bytes_total|tty|cwd|quiet_ms|log_path|original_token_count/);
    const structured = lean.structuredContent as Record<string, unknown>;
    for (const key of [
      "chunk_id",
      "output_bytes_total",
      "tty",
      "cwd",
      "quiet_ms",
      "log_path",
      "original_token_count",
      "wall_time_seconds",
    ]) {
      assert.notEqual(structured[key], undefined, key);
      assert.notEqual((lean.details as Record<string, unknown>)[key], undefined, key);
    }
    assert.ok(Value.Check(jobResultSchema, structured), JSON.stringify([...Value.Errors(jobResultSchema, structured)]));
    assert.equal(structured.log_path, LOG);
    assert.equal(structured.quiet_ms, 40);
  });

  it("the conditional fields stay whenever they apply", () => {
    const matched = header({ conditional: true, waitEnd: "matched", matchedLine: "ready", inputWait: { likely: true, reason: "prompt" } });
    assert.match(matched, /\nwait_status: matched\nmatched_line: ready\ninput_wait: likely$/);
  });
});

describe("max_output_tokens in our format", () => {
  it("cuts this call's output to about 4 bytes a token, with the honest footer and the field in details", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n");
    const capped = result({ output: { text: lines, printed: { bytes: lines.length, lines: 100 } } }, { maxOutputTokens: 10 });
    const output = textOf(capped).split("\n---\n")[1]!;
    assert.equal(
      output,
      `line 96\nline 97\nline 98\nline 99\nline 100\n\n[Showing the last 5 of 100 lines (791 B; 751 B not shown; 40B limit). Full output: ${LOG}]`,
    );
    assert.equal(capped.details.max_output_tokens, 10);
    assert.match(textOf(capped), /\nlog_path: .*\nwall_time_seconds: 5.002\noriginal_token_count: 198\n/);
  });

  it("never lifts the usual cap", () => {
    const big = "z\n".repeat(3_000);
    const printed = { bytes: 6_000, lines: 3_000 };
    const output = textOf(result({ output: { text: big, printed } }, { maxOutputTokens: 1_000_000 })).split("\n---\n")[1]!;
    assert.match(output, /\[Showing the last 2000 of 3000 lines/);
  });
});

describe("Codex's format", () => {
  const codex = (over: ReportParts = {}, extras: JobResultExtras = {}) => result(over, { format: "codex", ...extras });

  it("a running job: Codex's header lines, then the output; details point at the output", () => {
    const running = codex();
    const chunk = (running.structuredContent as { chunk_id: string }).chunk_id;
    assert.equal(
      textOf(running),
      `Chunk ID: ${chunk}\nWall time: 5.0020 seconds\nProcess running with session ID 9\nOriginal token count: 3\nOutput:\nGET / 200\n`,
    );
    const [from, to] = running.details.output_at!;
    assert.equal(textOf(running).slice(from, to), "GET / 200\n");
    assert.equal(running.details.format, "codex");
    assert.equal((running.structuredContent as Record<string, unknown>).log_path, LOG, "our fields stay structured");
  });

  it("an exit: the code; a death by signal reads 128 + the signal, as in our format; no code at all reads -1", () => {
    assert.match(textOf(codex({ job: { exit: { exitCode: 2, signal: null } } })), /\nProcess exited with code 2\nOriginal token count/);
    assert.match(textOf(codex({ job: { exit: { exitCode: 143, signal: "SIGTERM" } } })), /\nProcess exited with code 143\n/);
    assert.match(
      textOf(codex({ job: { exit: { exitCode: null, signal: null, failure: "could not start /x" } } })),
      /\nProcess exited with code -1\n/,
    );
    assert.doesNotMatch(textOf(codex({ job: { exit: { exitCode: 0, signal: null } } })), /session ID/);
  });

  it("Codex's head and tail cut under its budget, and facts it has no line for as Warning lines", () => {
    const text = "0123456789".repeat(100);
    const cut = codex({ output: { text, printed: { bytes: 1_000, lines: 1 } } }, { maxOutputTokens: 10 });
    assert.match(
      textOf(cut),
      /Output:\nWarning: truncated output \(original token count: 250\)\nTotal output lines: 1\n\n01234567890123456789…240 tokens truncated…01234567890123456789$/,
    );
    assert.equal(cut.details.truncation?.truncatedBy, "tokens");
    const stopped = codex({ job: { exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" } } });
    assert.match(textOf(stopped), /Output:\nWarning: the process was stopped at its timeout_s deadline\nGET \/ 200\n$/);
    const [from, to] = stopped.details.output_at!;
    assert.equal(textOf(stopped).slice(from, to), "GET / 200\n", "the renderer's output skips the warning");
  });

  it("wall time has exactly four decimals", () => {
    assert.equal(codexWallTime(5_002), "5.0020");
    assert.match(textOf(codex({ wallMs: 0.04 })), /\nWall time: 0\.0000 seconds\n/);
  });
});
