import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobSnapshot } from "../../../src/core/index.ts";
import { jobsNote } from "../../../src/pi/compaction-note.ts";

const job = (jobId: number, listening: string[]): JobSnapshot =>
  ({
    jobId,
    command: "python3 -m http.server 0",
    cwd: "/w",
    tty: false,
    elapsedMs: 65_000,
    quietMs: 0,
    outputBytesTotal: 0,
    outputReads: 1,
    logPath: "/l",
    wakeArmed: true,
    listening,
    attached: false,
  }) as JobSnapshot;

describe("the note after a compaction", () => {
  it("lists each live job on one line, with at most 8 addresses and how many more", () => {
    const many = Array.from({ length: 200 }, (_, i) => `127.0.0.1:${9000 + i}`);
    const note = jobsNote([job(3, ["127.0.0.1:8765"]), job(4, many)]);
    const lines = note.split("\n");
    assert.equal(lines.length, 3);
    assert.match(lines[1]!, /^- session_id 3 · running .* · listening 127\.0\.0\.1:8765 · wakes armed: on_exit$/);
    assert.match(lines[2]!, /listening 127\.0\.0\.1:9000, .*127\.0\.0\.1:9007 and 192 more \(list_sessions shows them\)/);
    assert.ok(note.length < 1_000, `${note.length} characters`);
  });

  it("also lists the jobs that exited unread, with their exit code", () => {
    const ended = { ...job(5, []), command: "make test", exit: { exitCode: 2, signal: null } } as JobSnapshot;
    const killed = { ...job(6, []), command: "srv", exit: { exitCode: 143, signal: "SIGTERM" } } as JobSnapshot;
    const note = jobsNote([job(3, [])], [ended, killed]);
    assert.match(note, /\nThese jobs you started have exited; you have not read their end yet \(write_stdin reads it once\):\n/);
    assert.match(note, /\n- session_id 5 · exited 2 · `make test`\n- session_id 6 · exited 143 \(SIGTERM\) · `srv`$/);
    const only = jobsNote([], [ended]);
    assert.match(only, /^\[unified-exec jobs\] The conversation was compacted\. These jobs you started have exited/);
    assert.doesNotMatch(only, /still running/);
  });
});
