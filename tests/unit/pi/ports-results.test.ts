/**
 * What results say of ports and memory, built from hand-made reports: the port a job could not get
 * (text and `structuredContent`, its command inert), a server gone deaf (`listening: none (was :3000,
 * closed N s ago)`, once, when it changed), memory and CPU time in a result's text only when the
 * memory changed noticeably (always in `structuredContent`), a kill's ports released or still held,
 * a listing's memory and lost port, `killed_by: memory`, and the HTTP status of a URL wait.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { killResult } from "../../../src/pi/results/kill-result.ts";
import { listResult } from "../../../src/pi/results/list-result.ts";
import { jobReport, killReport, listing } from "../../helpers/reports.ts";

const MB = 1024 * 1024;
const running = { waitEnd: "deadline" as const, job: { jobId: 4, outputReads: 2 } };
const text = (result: { content: { type: string; text?: string }[] }) => (result.content[0] as { text: string }).text;
const structured = (result: { structuredContent?: unknown }) => result.structuredContent as Record<string, unknown>;

describe("results on ports and memory", () => {
  it("a port the job could not get names the holder in the text and structuredContent, its command made inert", () => {
    const result = jobResult(
      jobReport(
        { waitEnd: "exited", job: { jobId: 5, exit: { exitCode: 1, signal: null } } },
        {
          portConflicts: [
            { port: 3000, pid: 11, job: { jobId: 2, command: "npm run dev" } },
            { port: 8000, pid: 4121, command: "node server.js\u001b[2J" },
          ],
        },
      ),
    );
    const conflict = "3000 held by session 2 (npm run dev); 8000 held by pid 4121 (node server.js\\e[2J), not a job of this Pi";
    assert.match(text(result), new RegExp(`^port_conflict: ${conflict.replace(/[()[\]\\]/g, "\\$&")}$`, "m"));
    assert.equal(structured(result).port_conflict, conflict);
  });

  it("a deaf server's result says what it lost when that is news; structuredContent keeps the empty list beside it", () => {
    const deaf = { listening: [], deaf: { was: ["127.0.0.1:3000"], closedAt: 0, closedMs: 14_200 } };
    const told = jobResult(jobReport(running, { job: deaf, listeningChanged: true }));
    assert.match(text(told), /^listening: none \(was :3000, closed 14 s ago\)$/m);
    assert.deepEqual(structured(told).listening, []);
    assert.equal(structured(told).listening_lost, "was :3000, closed 14 s ago");
    const again = jobResult(jobReport(running, { job: deaf }));
    assert.doesNotMatch(text(again), /listening/);
  });

  it("memory and CPU time are in the text only when the memory changed noticeably, always in structuredContent", () => {
    const usage = { usage: { rssBytes: 212 * MB, cpuMs: 3_460 } };
    const changed = jobResult(jobReport(running, { job: usage, usageChanged: true }));
    assert.match(text(changed), /^memory_mb: 212\ncpu_seconds: 3\.5$/m);
    const same = jobResult(jobReport(running, { job: usage }));
    assert.doesNotMatch(text(same), /memory_mb|cpu_seconds/);
    assert.equal(structured(same).memory_mb, 212);
    assert.equal(structured(same).cpu_seconds, 3.5);
  });

  it("a URL wait says the answer's status", () => {
    const result = jobResult(jobReport(running, { waitEnd: "listening", conditional: true, httpStatus: 200 }));
    assert.match(text(result), /^wait_status: listening\nhttp_status: 200$/m);
  });

  it("a kill says which ports are released and which are still held, by whom", () => {
    const result = killResult(
      killReport({
        job: { exit: { exitCode: 143, signal: "SIGTERM" } },
        portsReleased: [3000, 5173],
        portsStillHeld: [{ port: 9229, pid: 77, command: "node --inspect x.js" }],
      }),
    );
    assert.match(text(result), /^ports_released: 3000, 5173\nports_still_held: 9229 by pid 77 \(node --inspect x\.js\)$/m);
    assert.deepEqual(structured(result).ports_released, [3000, 5173]);
  });

  it("a job stopped over the memory cap says killed_by memory and the figure", () => {
    const exit = {
      exitCode: 137,
      signal: "SIGKILL" as const,
      stoppedBy: "memory" as const,
      failure: "stopped at 312 MB of resident memory",
    };
    const result = jobResult(jobReport({ waitEnd: "exited", job: { exit } }));
    assert.match(text(result), /^killed_by: memory$/m);
    assert.match(text(result), /^failure_message: stopped at 312 MB of resident memory$/m);
  });

  it("a listing shows each running job's memory and CPU time, and a port it lost", () => {
    const job = listing({
      jobId: 3,
      listening: [],
      deaf: { was: ["127.0.0.1:3000"], closedAt: 0, closedMs: 5_000 },
      usage: { rssBytes: 200 * MB, cpuMs: 1_000 },
    });
    const result = listResult([job]);
    assert.match(text(result), /listening: none \(was :3000, closed 5 s ago\)\n {2}memory_mb: 200\n {2}cpu_seconds: 1/);
    const session = (structured(result).sessions as Record<string, unknown>[])[0]!;
    assert.equal(session.memory_mb, 200);
    assert.equal(session.listening_lost, "was :3000, closed 5 s ago");
  });
});
