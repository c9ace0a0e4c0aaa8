import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobReport } from "../../../src/core/runtime.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";

const LOG = "/tmp/pi-unified-exec-x/job-4-00ff00ff.log";
const report = (over: Partial<JobReport> = {}): JobReport => ({
  jobId: 4,
  command: "make test",
  cwd: "/work",
  window: { ms: 10_000 },
  waitEnd: "exited",
  wallMs: 1234.4,
  text: "ok\n",
  omittedBytes: 0,
  outputBytesTotal: 3,
  quietMs: 12,
  logPath: LOG,
  tty: false,
  exit: { exitCode: 0, signal: null },
  ...over,
});

const text = (r: JobReport) => (jobResult(r).content[0] as { text: string }).text;
const keys = (body: string) =>
  body
    .slice(0, body.indexOf("\n---\n"))
    .split("\n")
    .map((line) => line.split(":")[0]);

describe("job result formatting", () => {
  it("writes the exited header in order, then ---, then the output", () => {
    const body = text(report());
    assert.deepEqual(keys(body), [
      "[exited]",
      "exit_code",
      "log_path",
      "cwd",
      "wall_time_seconds",
      "chunk_id",
      "original_token_count",
      "output_bytes_total",
      "quiet_ms",
      "tty",
    ]);
    assert.match(body, /\nwall_time_seconds: 1\.234\n/);
    assert.match(body, /\noriginal_token_count: 1\n/);
    assert.ok(body.endsWith("\n---\nok\n"));
  });

  it("writes session_id (and no exit_code) while running", () => {
    const result = jobResult(report({ exit: undefined, sessionId: 4, waitEnd: "deadline" }));
    const body = (result.content[0] as { text: string }).text;
    assert.match(body, /^\[still running\]\nsession_id: 4\nlog_path: /);
    assert.doesNotMatch(body, /exit_code/);
    assert.equal((result.structuredContent as { status: string }).status, "running");
    assert.equal(result.details.session_id, 4);
  });

  it("adds signal, omitted_bytes, input, failure_message and log_partial when they apply", () => {
    assert.match(text(report({ exit: { exitCode: 143, signal: "SIGTERM" } })), /exit_code: 143\nsignal: SIGTERM\nlog_path: /);
    const failed = text(report({ exit: { exitCode: null, signal: null, failure: "could not start /x" } }));
    assert.match(failed, /exit_code: null\n/);
    assert.match(failed, /tty: false\nfailure_message: could not start \/x\n---/);
    assert.match(text(report({ omittedBytes: 99 })), /quiet_ms: 12\nomitted_bytes: 99\ntty: false/);
    const epipe = text(report({ exit: undefined, sessionId: 4, input: { input: "bytes", failure: "stdin write failed: write EPIPE" } }));
    assert.match(epipe, /tty: false\ninput: bytes\nfailure_message: stdin write failed: write EPIPE\n---/);
    assert.match(text(report({ logPartialReason: "log write failed: ENOSPC" })), /tty: false\nlog_partial: true\n---/);
  });

  it("caps the output to Pi's 50 KiB with a footer naming the log; the token count is of the whole", () => {
    const line = `${"x".repeat(99)}\n`;
    const whole = line.repeat(1_000); // 100 000 bytes
    const result = jobResult(report({ text: whole }));
    const body = (result.content[0] as { text: string }).text;
    const output = body.slice(body.indexOf("\n---\n") + 5);
    assert.ok(Buffer.byteLength(output) <= 50 * 1024 + 200, `${Buffer.byteLength(output)} bytes shown`);
    assert.match(output, new RegExp(`\\n\\n\\[Showing lines \\d+-1000 of 1000 \\(50\\.0KB limit\\)\\. Full output: ${LOG}\\]$`));
    assert.match(body, /original_token_count: 25000\n/);
    const structured = result.structuredContent as { output: string; truncated: boolean };
    assert.equal(structured.truncated, true);
    assert.ok(Buffer.byteLength(structured.output) <= 50 * 1024);
    assert.equal(result.details.truncation?.truncatedBy, "bytes");
  });

  it("caps by lines too", () => {
    const body = text(report({ text: "a\n".repeat(3_000) }));
    assert.match(body, /\[Showing lines 1001-3000 of 3000\. Full output: /);
  });

  it("keeps the structured fields and the text in agreement, and details bounded", () => {
    const long = "x".repeat(5_000);
    const result = jobResult(report({ command: long, window: { ms: 30_000, requestedMs: 99_000 } }));
    const structured = result.structuredContent as Record<string, unknown>;
    assert.equal(structured.output, "ok\n");
    assert.equal(structured.exit_code, 0);
    assert.equal(structured.log_path, LOG);
    assert.match((result.content[0] as { text: string }).text, new RegExp(`chunk_id: ${structured.chunk_id}`));
    assert.equal(result.details.command.length, 1_001);
    assert.equal(result.details.yield_time_ms, 30_000);
    assert.equal(result.details.requested_yield_time_ms, 99_000);
    assert.equal("output" in result.details, false);
  });
});
