/** Results of kill_session (kill-result.ts): what was sent, escalation, the exit, cleanup evidence, who stopped the job. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobExit } from "../../../src/core/job/job.ts";
import type { KillReport } from "../../../src/core/job/job-snapshot.ts";
import { killResult, killResultSchema } from "../../../src/pi/results/kill-result.ts";
import { type KillParts, killReport } from "../../helpers/reports.ts";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const stopped = (stoppedBy: JobExit["stoppedBy"]): JobExit => ({ exitCode: 143, signal: "SIGTERM", ...(stoppedBy ? { stoppedBy } : {}) });

const kill = (over: KillParts = {}): KillReport =>
  killReport(
    {
      job: {
        jobId: 3,
        command: "npm run dev",
        cwd: "/work",
        exit: { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" },
        outputBytesTotal: 100,
        logPath: "/tmp/x/job-3.log",
      },
      termination: { signal: "SIGTERM", escalated: false, cleanup: "confirmed", survivors: [] },
      alreadyExited: false,
      wallMs: 52,
      output: { text: "bye\n", omittedBytes: 0 },
    },
    over,
  );

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

  it("keeps the lean header's rules: cwd only where it differs from Pi's, output_bytes_total never in the text, both in structuredContent and details", () => {
    const same = killResult(kill(), "/work");
    assert.doesNotMatch(text(same), /^cwd: /m);
    assert.doesNotMatch(text(same), /output_bytes_total/);
    assert.equal((same.structuredContent as { cwd: string }).cwd, "/work");
    assert.equal((same.structuredContent as { output_bytes_total: number }).output_bytes_total, 100);
    assert.equal(same.details.output_bytes_total, 100);
    assert.match(text(killResult(kill(), "/elsewhere")), /^cwd: \/work$/m);
  });

  it("names escaped survivors and keeps cleanup unconfirmed", () => {
    const result = killResult(kill({ termination: { cleanup: "unconfirmed", survivors: [4242, 4243], escalated: true } }));
    assert.match(text(result), /escalated: true\n[\s\S]*cleanup: unconfirmed\nsurvivors: 4242, 4243\n/);
    assert.deepEqual(result.details.survivors, [4242, 4243]);
  });

  it("a failed kill is an error result, and says the job stays registered", () => {
    const failed = killResult(
      kill({ job: { exit: undefined }, termination: { cleanup: "pending", failure: "SIGTERM could not be sent: EPERM" } }),
    );
    assert.equal(failed.isError, true);
    assert.match(text(failed), /^\[kill failed\]\n[\s\S]*failure_message: SIGTERM could not be sent: EPERM/);
    const stuck = killResult(kill({ job: { exit: undefined }, termination: { cleanup: "pending", escalated: true } }));
    assert.equal(stuck.isError, true);
    assert.match(text(stuck), /it stays registered, so kill_session can be tried again/);
  });

  it("an already-exited job reports its exit without a signal", () => {
    const result = killResult(kill({ alreadyExited: true, job: { exit: { exitCode: 4, signal: null } } }));
    assert.match(text(result), /^\[already exited\]\nsession_id: 3\nescalated: false\nexit_code: 4\n/);
    assert.doesNotMatch(text(result), /signal_sent/);
  });
});

describe("kill_session says who stopped a job", () => {
  const kill = (over: KillParts): KillReport =>
    killReport(
      {
        job: { jobId: 7, command: "npm run dev", cwd: "/work", outputBytesTotal: 40, logPath: "/tmp/x/job-7.log" },
        termination: { signal: "SIGTERM", escalated: false, cleanup: "confirmed", survivors: [] },
        alreadyExited: true,
        wallMs: 1,
        output: { text: "unread line\n", omittedBytes: 0 },
      },
      over,
    );

  it("kill_session on a job the user already stopped: [already exited], killed_by: user, the unread output", () => {
    const result = killResult(kill({ job: { exit: stopped("user") } }));
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
    const own = killResult(kill({ alreadyExited: false, job: { exit: stopped("killed") } }));
    assert.doesNotMatch(text(own), /killed_by/, "the model's own kill needs no attribution");
  });
});
