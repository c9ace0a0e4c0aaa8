/**
 * How results tell the model who stopped a job (`killed_by`) and that a wake is armed: the text's
 * status line and header, `structuredContent` (checked against each tool's declared outputSchema)
 * and `details`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobExit } from "../../../src/core/job.ts";
import type { JobListing, JobReport, KillReport } from "../../../src/core/runtime.ts";
import { completionNote, jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { killResult, killResultSchema } from "../../../src/pi/results/kill-result.ts";
import { listResult, listResultSchema } from "../../../src/pi/results/list-result.ts";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

const report = (over: Partial<JobReport> = {}): JobReport => ({
  jobId: 7,
  command: "npm run dev",
  cwd: "/work",
  window: { ms: 5_000 },
  waitEnd: "exited",
  wallMs: 3,
  text: "unread line\n",
  omittedBytes: 0,
  outputBytesTotal: 40,
  quietMs: 10,
  logPath: "/tmp/x/job-7.log",
  tty: false,
  ...over,
});

const stopped = (stoppedBy: JobExit["stoppedBy"]): JobExit => ({ exitCode: 143, signal: "SIGTERM", ...(stoppedBy ? { stoppedBy } : {}) });

describe("a job result after a stop the model did not ask for", () => {
  const cases = [
    ["user", "user"],
    ["boundary", "boundary"],
    ["timeout", "deadline"],
    ["log_quota", "quota"],
  ] as const;
  for (const [stoppedBy, killedBy] of cases) {
    it(`stoppedBy ${stoppedBy}: [killed], killed_by: ${killedBy}, the exit and the unread output; status stays exited`, () => {
      const result = jobResult(report({ exit: stopped(stoppedBy) }));
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
      const result = jobResult(report({ exit }));
      assert.match(text(result), /^\[exited\]\n/);
      assert.doesNotMatch(text(result), /killed_by/);
      assert.equal((result.structuredContent as Record<string, unknown>).killed_by, undefined);
    }
  });
});

describe("completion_notification on polls", () => {
  it("says armed on a running job's result, with the longer wording where a wake cannot outlive the run", () => {
    assert.equal(completionNote(true, true), "armed");
    assert.match(completionNote(true, false)!, /^armed, but in this print\/JSON run it can only arrive while the run is still going/);
    assert.equal(completionNote(undefined, true), undefined);
    const result = jobResult(report({ sessionId: 7, waitEnd: "deadline", wakeArmed: true }), { completion: completionNote(true, true) });
    assert.match(text(result), /\ncompletion_notification: armed\n/);
    assert.equal(result.details.completion_notification, "armed");
    assert.ok(Value.Check(jobResultSchema, result.structuredContent));
  });
});

describe("kill_session and list_sessions say who stopped a job", () => {
  const kill = (over: Partial<KillReport>): KillReport => ({
    sessionId: 7,
    command: "npm run dev",
    cwd: "/work",
    signal: "SIGTERM",
    escalated: false,
    cleanup: "confirmed",
    survivors: [],
    alreadyExited: true,
    wallMs: 1,
    text: "unread line\n",
    omittedBytes: 0,
    outputBytesTotal: 40,
    logPath: "/tmp/x/job-7.log",
    ...over,
  });

  it("kill_session on a job the user already stopped: [already exited], killed_by: user, the unread output", () => {
    const result = killResult(kill({ exit: stopped("user") }));
    assert.match(
      text(result),
      /^\[already exited\]\nsession_id: 7\nescalated: false\nexit_code: 143\nsignal: SIGTERM\nkilled_by: user\ncleanup: confirmed\n/,
    );
    assert.ok(text(result).endsWith("\n---\nunread line\n"));
    assert.equal(result.details.killed_by, "user");
    assert.ok(
      Value.Check(killResultSchema, result.structuredContent),
      JSON.stringify([...Value.Errors(killResultSchema, result.structuredContent)]),
    );
    const own = killResult(kill({ alreadyExited: false, exit: stopped("killed") }));
    assert.doesNotMatch(text(own), /killed_by/, "the model's own kill needs no attribution");
  });

  it("a listing names killed_by, and cleanup: unconfirmed for a lingering group", () => {
    const listing: JobListing = {
      sessionId: 7,
      command: "npm run dev",
      cwd: "/work",
      tty: false,
      status: "exited",
      exit: stopped("boundary"),
      elapsedMs: 1_000,
      quietMs: 10,
      outputBytesTotal: 40,
      logPath: "/tmp/x/job-7.log",
      logPartial: false,
      attached: false,
      wakeArmed: false,
      cleanup: "unconfirmed",
    };
    const result = listResult([listing]);
    assert.match(text(result), /\n {2}signal: SIGTERM\n {2}killed_by: boundary\n[\s\S]*\n {2}cleanup: unconfirmed/);
    assert.ok(
      Value.Check(listResultSchema, result.structuredContent),
      JSON.stringify([...Value.Errors(listResultSchema, result.structuredContent)]),
    );
  });
});
