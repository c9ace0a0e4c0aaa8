import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initTheme, type Theme } from "@earendil-works/pi-coding-agent";
import { renderWakeMessage, wakeText } from "../../../src/pi/wake-message.ts";

initTheme();
const plain = { fg: (_c: string, t: string) => t, bg: (_c: string, t: string) => t, bold: (t: string) => t } as unknown as Theme;
const drawn = (details: unknown, expanded = false) =>
  renderWakeMessage(
    { role: "custom", customType: "unified-exec-wake", content: "", display: true, details, timestamp: 0 } as never,
    { expanded, outputPad: 0 },
    plain,
  )!
    .render(400)
    .map((line) => line.trimEnd())
    .join("\n");

describe("wake prompt", () => {
  it("an input wake of a prompt that hides what is typed says it asks for a secret and to ask the person", () => {
    const wake = { jobId: 3, command: "sudo apt upgrade", line: "[sudo] password for me:", waitedMs: 30_000 };
    const text = wakeText({ jobs: [], more: 0, inputs: [{ ...wake, secret: true }] });
    assert.match(text, /- session 3 asks for a secret: ask the person with `ask_user` \(30 s without output\) · `sudo apt upgrade`/);
    assert.match(
      drawn({ jobs: [], more: 0, inputs: [{ ...wake, secret: true }] }),
      /⌨ session 3 asks for a secret · \[sudo\] password for me:/,
    );
    assert.match(wakeText({ jobs: [], more: 0, inputs: [wake] }), /- session 3 waits for input \(30 s/);
  });

  it("says what is unread without a byte of it, where the first failure-looking line is, and what rode with a turn to save turns", () => {
    const unread = { lines: 5_000, bytes: 49_390, fromLine: 1, toLine: 5_000, failures: 1, firstFailureLine: 1_200 };
    const exit = { jobId: 5, command: "npm test", cwd: "/w", exitCode: 1, signal: null, elapsedMs: 2_000, logPath: "/l/5.log", unread };
    const text = wakeText({ jobs: [exit], more: 0, held: 2, nextTurn: true });
    assert.match(text, /^\[unified-exec\] A background job you asked to hear of has exited:\n/);
    assert.match(text, /\n {2}unread: 5000 lines, 48\.2 KB \(log lines 1–5000\); first failure-looking line: log line 1200 \(1 in all\)\n/);
    assert.match(text, /\n2 of these waited to save turns \(the person's PI_UNIFIED_EXEC_WAKE_TURNS\)\.\n/);
    const partial = wakeText({
      jobs: [{ ...exit, unread: { ...unread, failures: 0, firstFailureLine: undefined }, logPartial: true }],
      more: 0,
    });
    assert.match(partial, /unread: 5000 lines, 48\.2 KB \(stream lines 1–5000\)\n/);
    const read = wakeText({ jobs: [{ ...exit, unread: { lines: 0, bytes: 0, fromLine: 9, toLine: 8, failures: 0 } }], more: 0 });
    assert.match(read, /unread: nothing/);
    assert.match(drawn({ jobs: [exit], more: 0, held: 2, next_turn: true }), /came with this turn \(next_turn\)\n {2}2 held to save turns/);
  });

  it("names each job with bounded metadata and counts the rest", () => {
    const text = wakeText({
      jobs: [
        { jobId: 3, command: "npm test\n  --ci", cwd: "/w", exitCode: 1, signal: null, elapsedMs: 12_345, logPath: "/l/3.log" },
        {
          jobId: 4,
          command: "make",
          cwd: "/w",
          exitCode: 143,
          signal: "SIGTERM",
          elapsedMs: 1_800_000,
          logPath: "/l/4.log",
          reason: "stopped at its timeout_s deadline",
        },
      ],
      more: 2,
    });
    assert.match(text, /^\[unified-exec\] 4 background jobs you asked to be woken for have exited:\n/);
    assert.match(text, /- session 3 · exit_code 1 · ran 12\.3s · cwd \/w · log \/l\/3\.log · `npm test\\n {2}--ci`/);
    assert.match(text, /- session 4 · exit_code 143 \(SIGTERM\) · ran 1800\.0s · stopped at its timeout_s deadline · /);
    assert.match(text, /- and 2 more \(list_sessions shows them\)/);
    assert.match(text, /Continue only with work that is still relevant/);
  });
  it("counts a job that matched and exited in one prompt once, and does not offer to re-arm the pattern of a job that ended", () => {
    const exit = { jobId: 2, command: "srv", cwd: "/w", exitCode: 1, signal: null, elapsedMs: 1_000, logPath: "/l/2.log" };
    const pattern = { jobId: 2, pattern: "E", line: "E9", command: "srv", more: 0, disarmed: true };
    const both = wakeText({ jobs: [exit], more: 0, patterns: [pattern] });
    assert.match(both, /^\[unified-exec\] A background job you asked to be woken for has news:\n/);
    assert.match(both, /wake_on_pattern disarmed after 10 wakes\n/);
    assert.doesNotMatch(both, /set_on_exit to arm it again/);
    const running = wakeText({ jobs: [], more: 0, patterns: [pattern] });
    assert.match(running, /wake_on_pattern disarmed after 10 wakes: set_on_exit to arm it again/);
  });

  it("says plainly how many more lines matched, and names the read that returns at once when the output already waits", () => {
    const pattern = { jobId: 7, pattern: "FAIL", line: "FAIL a.test.ts", command: "vitest", more: 4, disarmed: false };
    const text = wakeText({ jobs: [], more: 0, patterns: [pattern] });
    assert.match(text, /- session 7 printed a line matching \/FAIL\/, and 4 more after it · `vitest`\n {2}line: FAIL a\.test\.ts\n/);
    assert.match(text, /write_stdin\(session_id: 7, until_quiet_ms: 500\)/);
    assert.match(wakeText({ jobs: [], more: 0, patterns: [{ ...pattern, more: 1 }] }), /, and 1 more after it · /);
    assert.doesNotMatch(wakeText({ jobs: [], more: 0, patterns: [{ ...pattern, more: 0 }] }), /more after it/);
  });

  it("quotes a long line as a window around the match, in the prompt (≤ 300 characters) and in the row (≤ 80)", () => {
    const line = `${"a".repeat(380)} ERROR disk full ${"b".repeat(24)}`;
    const pattern = { jobId: 3, pattern: "ERROR", line, command: "srv", more: 0, disarmed: false };
    const quoted = /\n {2}line: (.*)\n/.exec(wakeText({ jobs: [], more: 0, patterns: [pattern] }))![1]!;
    assert.ok(quoted.length <= 300, `${quoted.length} characters`);
    assert.match(quoted, /^…a+ ERROR disk full b+$/);
    const row = drawn({ jobs: [], more: 0, patterns: [{ ...pattern, line: quoted }] });
    const shown = /matched \/ERROR\/ · (.*)$/.exec(row)![1]!;
    assert.ok(shown.length <= 80, `${shown.length} characters`);
    assert.match(shown, /ERROR disk full/);
  });

  it("a job a person typed into: the prompt and the row say a line matched without quoting it", () => {
    const pattern = { jobId: 5, pattern: "stored credential", line: "", lineWithheld: true, command: "vault", more: 0, disarmed: false };
    const text = wakeText({ jobs: [], more: 0, patterns: [pattern] });
    assert.match(
      text,
      /- session 5 printed a line matching \/stored credential\/ · `vault`\n {2}line: not quoted: a person typed into this job; write_stdin reads it\n/,
    );
    assert.match(
      drawn({ jobs: [], more: 0, patterns: [pattern] }),
      /🔔 session 5 matched \/stored credential\/ · line not quoted \(typed into\)/,
    );
  });
});
