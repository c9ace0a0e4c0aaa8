import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobListing, KillReport } from "../../../src/core/runtime.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { killResult } from "../../../src/pi/results/kill-result.ts";
import { listResult } from "../../../src/pi/results/list-result.ts";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

const kill = (over: Partial<KillReport> = {}): KillReport => ({
  sessionId: 3,
  command: "npm run dev",
  cwd: "/work",
  signal: "SIGTERM",
  escalated: false,
  cleanup: "confirmed",
  survivors: [],
  alreadyExited: false,
  exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" },
  wallMs: 52,
  text: "bye\n",
  omittedBytes: 0,
  outputBytesTotal: 100,
  logPath: "/tmp/x/job-3.log",
  ...over,
});

describe("kill_session results", () => {
  it("reports the signal, escalation, exit and cleanup evidence, then the last output", () => {
    const result = killResult(kill());
    assert.match(
      text(result),
      /^\[killed\]\nsession_id: 3\nsignal_sent: SIGTERM\nescalated: false\nexit_code: 143\nsignal: SIGTERM\ncleanup: confirmed\nlog_path: /,
    );
    assert.ok(text(result).endsWith("\n---\nbye\n"));
    assert.equal(result.isError, undefined);
    assert.equal((result.structuredContent as { status: string }).status, "killed");
  });

  it("names escaped survivors and keeps cleanup unconfirmed", () => {
    const result = killResult(kill({ cleanup: "unconfirmed", survivors: [4242, 4243], escalated: true }));
    assert.match(text(result), /escalated: true\n[\s\S]*cleanup: unconfirmed\nsurvivors: 4242, 4243\n/);
    assert.deepEqual(result.details.survivors, [4242, 4243]);
  });

  it("a failed kill is an error result, and says the job stays registered", () => {
    const failed = killResult(kill({ exit: undefined, cleanup: "pending", failure: "SIGTERM could not be sent: EPERM" }));
    assert.equal(failed.isError, true);
    assert.match(text(failed), /^\[kill failed\]\n[\s\S]*failure_message: SIGTERM could not be sent: EPERM/);
    const stuck = killResult(kill({ exit: undefined, cleanup: "pending", escalated: true }));
    assert.equal(stuck.isError, true);
    assert.match(text(stuck), /it stays registered, so kill_session can be tried again/);
  });

  it("an already-exited job reports its exit without a signal", () => {
    const result = killResult(kill({ alreadyExited: true, exit: { exitCode: 4, signal: null } }));
    assert.match(text(result), /^\[already exited\]\nsession_id: 3\nescalated: false\nexit_code: 4\n/);
    assert.doesNotMatch(text(result), /signal_sent/);
  });
});

describe("list_sessions results", () => {
  const listing = (over: Partial<JobListing>): JobListing => ({
    sessionId: 1,
    command: "npm run dev\n  --port 3000",
    cwd: "/work",
    tty: false,
    status: "running",
    elapsedMs: 12_345,
    quietMs: 200,
    outputBytesTotal: 4_000,
    logPath: "/tmp/x/job-1.log",
    logPartial: false,
    deadlineRemainingMs: 1_787_000,
    attached: false,
    wakeArmed: false,
    ...over,
  });

  it("lists every job with its fields and the host clock", () => {
    const result = listResult(
      [
        listing({}),
        listing({
          sessionId: 2,
          command: "make",
          status: "exited",
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

  it("says so when there are none", () => {
    assert.match(text(listResult([])), /^\[0 sessions: 0 running, 0 exited\]\ntool_time_utc: .+\n---\n\(no sessions\)$/);
  });
});

describe("job results under supervision", () => {
  it("say timed_out, the slot warning, and a quota stop", () => {
    const base = {
      jobId: 1,
      command: "x",
      cwd: "/",
      window: { ms: 250 },
      waitEnd: "exited" as const,
      wallMs: 1,
      text: "",
      omittedBytes: 0,
      outputBytesTotal: 0,
      quietMs: 0,
      logPath: "/l",
      tty: false,
    };
    assert.match(
      text(jobResult({ ...base, exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" } })),
      /^\[killed\]\n[\s\S]*signal: SIGTERM\ntimed_out: true\nkilled_by: deadline\nlog_path/,
    );
    assert.match(
      text(jobResult({ ...base, exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "log_quota" } })),
      /failure_message: stopped because its log reached the quota/,
    );
    assert.match(text(jobResult({ ...base, slots: { used: 61, capacity: 64 } })), /warning: 61 of 64 job slots are in use/);
  });
});
