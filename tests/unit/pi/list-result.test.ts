/** Results of list_sessions (list-result.ts): one block per job and the host clock; who stopped a job; lingering groups. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobExit } from "../../../src/core/job/job.ts";
import type { JobListing } from "../../../src/core/job/job-snapshot.ts";
import { listResult, listResultSchema } from "../../../src/pi/results/list-result.ts";
import { listing as listingOf } from "../../helpers/reports.ts";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const stopped = (stoppedBy: JobExit["stoppedBy"]): JobExit => ({ exitCode: 143, signal: "SIGTERM", ...(stoppedBy ? { stoppedBy } : {}) });

describe("list_sessions results", () => {
  const listing = (over: Partial<JobListing>): JobListing =>
    listingOf(
      {
        jobId: 1,
        command: "npm run dev\n  --port 3000",
        cwd: "/work",
        tty: false,
        elapsedMs: 12_345,
        quietMs: 200,
        outputBytesTotal: 4_000,
        logPath: "/tmp/x/job-1.log",
        deadlineRemainingMs: 1_787_000,
        attached: false,
        wakeArmed: false,
      },
      over,
    );

  it("lists every job with its fields and the host clock", () => {
    const result = listResult(
      [
        listing({}),
        listing({
          jobId: 2,
          command: "make",
          exit: { exitCode: 0, signal: null, stoppedBy: "timeout" },
          deadlineRemainingMs: undefined,
        }),
      ],
      new Date("2026-12-02T16:00:00.000Z"),
    );
    const body = text(result);
    assert.match(
      body,
      /^\[2 sessions: 1 running, 1 exited\]\ntool_time_utc: 2026-12-02T16:00:00\.000Z\n---\nsession_id: 1\n {2}command: npm run dev\\n {2}--port 3000\n/,
    );
    assert.match(body, /\n {2}deadline_remaining_seconds: 1787\n/);
    assert.match(body, /session_id: 2\n {2}command: make\n[\s\S]*exit_code: 0\n {2}timed_out: true\n/);
    const structured = result.structuredContent as { tool_time_utc: string; sessions: { session_id: number }[] };
    assert.equal(structured.tool_time_utc, "2026-12-02T16:00:00.000Z");
    assert.deepEqual(
      structured.sessions.map((s) => s.session_id),
      [1, 2],
    );
  });

  it("says the exit wake's level, an exited job's unread part, and the notices the turn budget holds", () => {
    const unread = { lines: 3, bytes: 120, fromLine: 8, toLine: 10, failures: 1, firstFailureLine: 9 };
    const result = listResult(
      [listing({ wakeArmed: true, wakeLevel: "next_turn" }), listing({ jobId: 2, exit: { exitCode: 1, signal: null }, unread })],
      new Date(0),
      { count: 2, turns: 6 },
    );
    assert.match(text(result), /\nnotices_held: 2 \(to save turns: 6 per 10 min; they come with your next turn\)\n/);
    assert.match(text(result), /session_id: 1\n(?: {2}.*\n)* {2}exit_wake: next_turn\n/);
    assert.match(
      text(result),
      /session_id: 2\n(?: {2}.*\n)* {2}unread: 3 lines, 0\.1 KB \(log lines 8–10\); first failure-looking line: log line 9 \(1 in all\)\n/,
    );
    assert.equal((result.structuredContent as { notices_held?: number }).notices_held, 2);
    assert.ok(Value.Check(listResultSchema, result.structuredContent));
  });

  it("the text names the exit wake as exit_wake (armed or none); structuredContent keeps wake_armed", () => {
    const result = listResult([listing({ wakeArmed: true }), listing({ jobId: 2, wakeArmed: false })]);
    assert.match(text(result), /session_id: 1\n(?: {2}.*\n)* {2}exit_wake: armed\n/);
    assert.match(text(result), /session_id: 2\n(?: {2}.*\n)* {2}exit_wake: none/);
    assert.doesNotMatch(text(result), /wake_armed/);
    const sessions = (result.structuredContent as { sessions: { wake_armed: boolean }[] }).sessions;
    assert.deepEqual(
      sessions.map((session) => session.wake_armed),
      [true, false],
    );
  });

  it("says so when there are none", () => {
    assert.match(text(listResult([])), /^\[0 sessions: 0 running, 0 exited\]\ntool_time_utc: .+\n---\n\(no sessions\)$/);
  });
});

describe("list_sessions says who stopped a job", () => {
  it("a listing names killed_by, and cleanup: unconfirmed for a lingering group", () => {
    const listing: JobListing = listingOf({
      jobId: 7,
      command: "npm run dev",
      cwd: "/work",
      tty: false,
      exit: stopped("boundary"),
      elapsedMs: 1_000,
      quietMs: 10,
      outputBytesTotal: 40,
      logPath: "/tmp/x/job-7.log",
      attached: false,
      wakeArmed: false,
      cleanup: "unconfirmed",
    });
    const result = listResult([listing]);
    assert.match(text(result), /\n {2}signal: SIGTERM\n {2}killed_by: boundary\n[\s\S]*\n {2}cleanup: unconfirmed/);
    assert.ok(
      Value.Check(listResultSchema, result.structuredContent),
      JSON.stringify([...Value.Errors(listResultSchema, result.structuredContent)]),
    );
  });
});
