import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { omissionMarker } from "../../../src/core/head-tail-buffer.ts";
import type { JobReport } from "../../../src/core/runtime.ts";
import { jobResult } from "../../../src/pi/result.ts";

const report = (over: Partial<JobReport> = {}): JobReport => ({
  jobId: 4,
  command: "make test",
  cwd: "/work",
  window: { ms: 10_000 },
  waitEnd: "exited",
  wallMs: 1234.4,
  output: { head: Buffer.from("ok\n"), tail: Buffer.alloc(0), omittedBytes: 0 },
  outputBytesTotal: 3,
  quietMs: 12,
  exit: { exitCode: 0, signal: null },
  ...over,
});

const text = (r: JobReport) => (jobResult(r).content[0] as { text: string }).text;

describe("job result formatting", () => {
  it("writes the exited header in order, then ---, then the output", () => {
    const lines = text(report()).split("\n");
    assert.deepEqual(
      lines.map((line) => line.split(":")[0]),
      ["[exited]", "exit_code", "cwd", "wall_time_seconds", "chunk_id", "original_token_count", "output_bytes_total", "quiet_ms", "tty", "---", "ok", ""],
    );
    assert.ok(lines.includes("wall_time_seconds: 1.234"));
    assert.ok(lines.includes("original_token_count: 1"));
  });

  it("writes session_id (and no exit_code) while running", () => {
    const result = jobResult(report({ exit: undefined, sessionId: 4, waitEnd: "deadline" }));
    const body = (result.content[0] as { text: string }).text;
    assert.match(body, /^\[still running\]\nsession_id: 4\ncwd: /);
    assert.doesNotMatch(body, /exit_code/);
    assert.equal((result.structuredContent as { status: string }).status, "running");
    assert.equal(result.details.session_id, 4);
  });

  it("adds signal, failure_message and omitted_bytes when they apply", () => {
    const killed = text(report({ exit: { exitCode: 143, signal: "SIGTERM" } }));
    assert.match(killed, /exit_code: 143\nsignal: SIGTERM\n/);
    const failed = text(report({ exit: { exitCode: null, signal: null, failure: "could not start /x" } }));
    assert.match(failed, /exit_code: null\n/);
    assert.match(failed, /tty: false\nfailure_message: could not start \/x\n---/);
    const gap = text(report({ output: { head: Buffer.from("a"), tail: Buffer.from("z"), omittedBytes: 99 } }));
    assert.match(gap, /omitted_bytes: 99\n/);
    assert.ok(gap.endsWith(`---\na${omissionMarker(99)}z`));
  });

  it("keeps the structured fields and the text in agreement, and details bounded", () => {
    const long = "x".repeat(5_000);
    const result = jobResult(report({ command: long, window: { ms: 30_000, requestedMs: 99_000 } }));
    const structured = result.structuredContent as Record<string, unknown>;
    assert.equal(structured.output, "ok\n");
    assert.equal(structured.exit_code, 0);
    assert.match((result.content[0] as { text: string }).text, new RegExp(`chunk_id: ${structured.chunk_id}`));
    assert.equal(result.details.command.length, 1_001);
    assert.equal(result.details.yield_time_ms, 30_000);
    assert.equal(result.details.requested_yield_time_ms, 99_000);
    assert.equal("output" in result.details, false);
  });
});
