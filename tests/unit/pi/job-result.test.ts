/**
 * Results of exec_command and write_stdin (job-result.ts): the lean header in reading order (only
 * the fields that carry news), the capped output with its honest footer, `structuredContent` with
 * every field (checked against the tool's outputSchema) and bounded `details`; who stopped a job
 * (`killed_by`), the armed note, and what supervision adds (timed_out, slots, quota).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobExit } from "../../../src/core/job/job.ts";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { completionNote } from "../../../src/pi/results/job-fields.ts";
import { jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { jobReport, type ReportParts } from "../../helpers/reports.ts";

const LOG = "/tmp/pi-unified-exec-x/job-4-00ff00ff.log";
const report = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: {
        jobId: 4,
        command: "make test",
        cwd: "/work",
        outputBytesTotal: 3,
        quietMs: 12,
        logPath: LOG,
        tty: false,
        exit: { exitCode: 0, signal: null },
      },
      window: { ms: 10_000 },
      waitEnd: "exited",
      wallMs: 1234.4,
      output: { text: "ok\n", omittedBytes: 0 },
    },
    over,
  );

/** The model's text of a result, or of the result of a report. */
const text = (r: JobReport | { content: unknown[] }) => (("content" in r ? r : jobResult(r)).content[0] as { text: string }).text;

/** A job whose unread output is one line, for results after a stop. */
const unread = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: { jobId: 7, command: "npm run dev", cwd: "/work", outputBytesTotal: 40, quietMs: 10, logPath: "/tmp/x/job-7.log", tty: false },
      window: { ms: 5_000 },
      waitEnd: "exited",
      wallMs: 3,
      output: { text: "unread line\n", omittedBytes: 0 },
    },
    over,
  );

const stopped = (stoppedBy: JobExit["stoppedBy"]): JobExit => ({ exitCode: 143, signal: "SIGTERM", ...(stoppedBy ? { stoppedBy } : {}) });
const keys = (body: string) =>
  body
    .slice(0, body.indexOf("\n---\n"))
    .split("\n")
    .map((line) => line.split(":")[0]);

describe("job result formatting", () => {
  it("writes the exited header in order, then ---, then the output", () => {
    const body = text(report());
    assert.deepEqual(keys(body), ["[exited]", "exit_code", "log_path", "cwd", "wall_time_seconds"]);
    assert.match(body, /\nwall_time_seconds: 1\.234\n/);
    assert.ok(body.endsWith("\n---\nok\n"));
  });

  it("writes session_id (and no exit_code) while running", () => {
    const result = jobResult(report({ job: { exit: undefined }, waitEnd: "deadline" }));
    const body = (result.content[0] as { text: string }).text;
    assert.match(body, /^\[still running\]\nsession_id: 4\nlog_path: /);
    assert.doesNotMatch(body, /exit_code/);
    assert.equal((result.structuredContent as { status: string }).status, "running");
    assert.equal(result.details.session_id, 4);
  });

  it("adds signal, omitted_bytes, input, failure_message and log_partial when they apply", () => {
    assert.match(text(report({ job: { exit: { exitCode: 143, signal: "SIGTERM" } } })), /exit_code: 143\nsignal: SIGTERM\nlog_path: /);
    const failed = text(report({ job: { exit: { exitCode: null, signal: null, failure: "could not start /x" } } }));
    assert.match(failed, /exit_code: null\n/);
    assert.match(failed, /wall_time_seconds: 1\.234\nfailure_message: could not start \/x\n---/);
    assert.match(
      text(report({ output: { omittedBytes: 99 } })),
      /wall_time_seconds: 1\.234\noriginal_token_count: 26\nomitted_bytes: 99\n---/,
      "the dropped bytes count in the estimate",
    );
    const epipe = text(
      report({ job: { exit: undefined }, input: { input: "bytes", sentBytes: 0, failure: "stdin write failed: write EPIPE" } }),
    );
    assert.match(epipe, /wall_time_seconds: 1\.234\ninput: 0 bytes sent\nfailure_message: stdin write failed: write EPIPE\n---/);
    assert.match(
      text(report({ job: { logPartialReason: "log write failed: ENOSPC" } })),
      /wall_time_seconds: 1\.234\nlog_partial: true\n---/,
    );
  });

  it("caps the output to Pi's 50 KiB with a footer that counts what was printed; the token count is of the whole", () => {
    const line = `${"x".repeat(99)}\n`;
    const whole = line.repeat(1_000); // 100 000 bytes
    const result = jobResult(report({ output: { text: whole } }));
    const body = (result.content[0] as { text: string }).text;
    const output = body.slice(body.indexOf("\n---\n") + 5);
    assert.ok(Buffer.byteLength(output) <= 50 * 1024 + 200, `${Buffer.byteLength(output)} bytes shown`);
    assert.match(
      output,
      new RegExp(
        `\\n\\n\\[Showing the last 512 of 1000 lines \\(100\\.0 KB; 48\\.8 KB not shown; 50\\.0KB limit\\)\\. Full output: ${LOG}\\]$`,
      ),
    );
    assert.match(body, /original_token_count: 25000\n/);
    const structured = result.structuredContent as { output: string; truncated: boolean };
    assert.equal(structured.truncated, true);
    assert.ok(Buffer.byteLength(structured.output) <= 50 * 1024);
    assert.equal(result.details.truncation?.truncatedBy, "bytes");
    assert.deepEqual(result.details.truncation?.printed, { bytes: 100_000, lines: 1_000 });
  });

  it("caps by lines too", () => {
    const body = text(report({ output: { text: "a\n".repeat(3_000) } }));
    assert.match(body, /\[Showing the last 2000 of 3000 lines \(6\.0 KB; 2\.0 KB not shown\)\. Full output: /);
  });

  it("keeps the structured fields and the text in agreement, and details bounded", () => {
    const long = "x".repeat(5_000);
    const result = jobResult(report({ job: { command: long }, window: { ms: 30_000, requestedMs: 99_000 } }));
    const structured = result.structuredContent as Record<string, unknown>;
    assert.equal(structured.output, "ok\n");
    assert.equal(structured.exit_code, 0);
    assert.equal(structured.log_path, LOG);
    assert.match(String(structured.chunk_id), /^[0-9a-f]{6}$/);
    assert.doesNotMatch((result.content[0] as { text: string }).text, /chunk_id|output_bytes_total|tty/);
    assert.equal(structured.output_bytes_total, 3);
    assert.equal(structured.tty, false);
    assert.equal(structured.cwd, "/work");
    assert.equal(structured.quiet_ms, 12);
    assert.equal(result.details.command.length, 1_001);
    assert.equal(result.details.yield_time_ms, 30_000);
    assert.equal(result.details.requested_yield_time_ms, 99_000);
    assert.equal("output" in result.details, false);
  });

  it("the text says what the model's input was and what a clamped window became; a default is never said", () => {
    const sent = text(jobResult(report({ job: { exit: undefined }, input: { input: "bytes", sentBytes: 6 } })));
    assert.match(sent, /\ninput: 6 bytes sent\n/);
    const refused = jobResult(report({ job: { exit: undefined }, input: { input: "bytes", sentBytes: 4, refusedBytes: 2 } }));
    assert.match(text(refused), /\ninput: 4 bytes sent\ninput_refused_bytes: 2\n/);
    assert.equal((refused.structuredContent as Record<string, unknown>).input, "bytes", "structuredContent keeps the kind");
    assert.match(text(report({ job: { exit: undefined }, input: { input: "interrupt", sentBytes: 0 } })), /\ninput: interrupt\n/);
    const clamped = text(report({ window: { ms: 30_000, requestedMs: 45_000 } }));
    assert.match(clamped, /wall_time_seconds: 1\.234\nyield_time_ms: 45000 → 30000\n/);
    assert.doesNotMatch(text(report({ window: { ms: 5_000 } })), /yield_time_ms/);
  });
});

describe("a job result after a stop the model did not ask for", () => {
  const cases = [
    ["user", "user"],
    ["boundary", "boundary"],
    ["timeout", "deadline"],
    ["log_quota", "quota"],
  ] as const;
  for (const [stoppedBy, killedBy] of cases) {
    it(`stoppedBy ${stoppedBy}: [killed], killed_by: ${killedBy}, the exit and the unread output; status stays exited`, () => {
      const result = jobResult(unread({ job: { exit: stopped(stoppedBy) } }));
      assert.match(
        text(result),
        new RegExp(`^\\[killed\\]\\nexit_code: 143\\nsignal: SIGTERM\\n(timed_out: true\\n)?killed_by: ${killedBy}\\n`),
      );
      assert.ok(text(result).endsWith("\n---\nunread line\n"));
      const structured = result.structuredContent as Record<string, unknown>;
      assert.equal(structured.status, "exited");
      assert.equal(structured.killed_by, killedBy);
      assert.equal(result.details.killed_by, killedBy);
      assert.ok(Value.Check(jobResultSchema, structured), JSON.stringify([...Value.Errors(jobResultSchema, structured)]));
    });
  }

  it("the model's own kill and a natural exit carry no killed_by and read [exited]", () => {
    for (const exit of [stopped("killed"), { exitCode: 0, signal: null }]) {
      const result = jobResult(unread({ job: { exit } }));
      assert.match(text(result), /^\[exited\]\n/);
      assert.doesNotMatch(text(result), /killed_by/);
      assert.equal((result.structuredContent as Record<string, unknown>).killed_by, undefined);
    }
  });
});

describe("completion_notification on polls", () => {
  it("says armed on a running job's result, with the longer wording where a wake cannot outlive the run", () => {
    assert.equal(completionNote("wake", "rpc"), "armed");
    assert.match(completionNote("wake", "print")!, /^armed, but in this print\/JSON run it can only arrive while the run is still going/);
    assert.equal(completionNote(undefined, "rpc"), undefined);
    const result = jobResult(unread({ job: { exit: undefined, wakeArmed: true }, waitEnd: "deadline", wake: "armed" }), {
      completion: completionNote("wake", "rpc"),
    });
    assert.match(text(result), /\ncompletion_notification: armed\n/);
    assert.equal(result.details.completion_notification, "armed");
    assert.ok(Value.Check(jobResultSchema, result.structuredContent));
  });

  it("says next_turn at that level, and once, on the call that armed it, that it never starts a turn", () => {
    assert.equal(completionNote("next_turn", "rpc"), "next_turn");
    assert.match(
      completionNote("next_turn", "rpc", true)!,
      /^next_turn \(told in your next turn, whoever starts it; it never starts one\)$/,
    );
  });
});

describe("job results under supervision", () => {
  it("say timed_out, the slot warning, and a quota stop", () => {
    const base = {
      job: { jobId: 1, command: "x", cwd: "/", outputBytesTotal: 0, quietMs: 0, logPath: "/l", tty: false },
      window: { ms: 250 },
      waitEnd: "exited" as const,
      wallMs: 1,
      output: { text: "", omittedBytes: 0 },
    };
    assert.match(
      text(jobResult(jobReport(base, { job: { exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" } } }))),
      /^\[killed\]\n[\s\S]*signal: SIGTERM\ntimed_out: true\nkilled_by: deadline\nlog_path/,
    );
    assert.match(
      text(jobResult(jobReport(base, { job: { exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "log_quota" } } }))),
      /failure_message: stopped because its log reached the quota/,
    );
    assert.match(text(jobResult(jobReport(base, { slots: { used: 61, capacity: 64 } }))), /warning: 61 of 64 job slots are in use/);
  });
});
