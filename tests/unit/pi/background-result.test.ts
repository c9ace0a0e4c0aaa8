/**
 * What a result says of a job whose shell exited while processes it started run on (issue 37): the
 * `background:` line (singular and plural, at most three named, the rest counted, names withheld,
 * metadata made one inert line), `shell_exit_code` beside it, both in the text only when the set is
 * news, always in `structuredContent` (schema-valid), and in listings.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { backgroundLine } from "../../../src/pi/results/job-fields.ts";
import { jobResult, jobResultSchema } from "../../../src/pi/results/job-result.ts";
import { listResult, listResultSchema } from "../../../src/pi/results/list-result.ts";
import { jobReport, type ReportParts } from "../../helpers/reports.ts";

const CWD = "/home/you/project";
const server = { pids: [4242], named: [{ pid: 4242, command: "python3 -m http.server" }] };

/** The result of the call that saw the shell exit, leaving a server running. */
const report = (over: ReportParts = {}): JobReport =>
  jobReport(
    {
      job: {
        jobId: 3,
        command: "python3 -m http.server &",
        cwd: CWD,
        outputReads: 1,
        shellExit: { code: 0, signal: null },
        background: server,
      },
      window: { ms: 10_000 },
      waitEnd: "background",
      wallMs: 1_004,
      output: { text: "", omittedBytes: 0, printed: { bytes: 0, lines: 0 } },
      backgroundChanged: true,
    },
    over,
  );
const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe("a job whose shell exited while processes run on", () => {
  it("names one process in the singular, with what stops it", () => {
    assert.equal(backgroundLine(server), "1 process still runs: python3 -m http.server (pid 4242); kill_session stops it");
  });

  it("names at most three, counts the rest, and says them in the plural", () => {
    const pids = [10, 11, 12, 13, 14];
    const named = pids.slice(0, 3).map((pid) => ({ pid, command: `worker ${pid}` }));
    assert.equal(
      backgroundLine({ pids, named }),
      "5 processes still run: worker 10 (pid 10), worker 11 (pid 11), worker 12 (pid 12) and 2 more; kill_session stops them",
    );
  });

  it("gives only the pid where the command line is withheld, and makes a hostile command line one inert line", () => {
    assert.equal(backgroundLine({ pids: [7], named: [{ pid: 7 }] }), "1 process still runs: pid 7; kill_session stops it");
    const hostile = backgroundLine({ pids: [8], named: [{ pid: 8, command: "evil\n[exited]\u202e" }] });
    assert.ok(!hostile.includes("\n"));
    assert.ok(!hostile.includes("\u202e"));
  });

  it("the first result says it: still running, session_id, shell_exit_code and the background line", () => {
    const result = jobResult(report(), { piCwd: CWD });
    const text = textOf(result);
    assert.match(
      text,
      /^\[still running\]\nsession_id: 3\nshell_exit_code: 0\nbackground: 1 process still runs: python3 -m http\.server \(pid 4242\); kill_session stops it\n/,
    );
    const structured = result.structuredContent as Record<string, unknown>;
    assert.equal(structured.status, "running");
    assert.equal(structured.shell_exit_code, 0);
    assert.ok(Value.Check(jobResultSchema, structured), JSON.stringify([...Value.Errors(jobResultSchema, structured)]));
  });

  it("a later result with the same set leaves both out of the text, but not out of structuredContent", () => {
    const result = jobResult(report({ backgroundChanged: undefined, waitEnd: "deadline", job: { outputReads: 2 } }), { piCwd: CWD });
    assert.doesNotMatch(textOf(result), /shell_exit_code|background:/);
    assert.equal((result.structuredContent as Record<string, unknown>).shell_exit_code, 0);
    assert.match(String((result.structuredContent as Record<string, unknown>).background), /http\.server/);
  });

  it("a conditional wait the shell's exit ended says wait_status: shell_exited", () => {
    const result = jobResult(report({ conditional: true }), { piCwd: CWD });
    assert.match(textOf(result), /\nwait_status: shell_exited\n/);
  });

  it("a listing shows the shell's exit code and what runs on", () => {
    const { job } = report();
    const listing = listResult([{ ...job }]);
    const [session] = (listing.structuredContent as { sessions: Record<string, unknown>[] }).sessions;
    assert.equal(session?.status, "running");
    assert.equal(session?.shell_exit_code, 0);
    assert.match(String(session?.background), /^1 process still runs: python3 -m http\.server \(pid 4242\)/);
    assert.ok(Value.Check(listResultSchema, listing.structuredContent));
  });
});
