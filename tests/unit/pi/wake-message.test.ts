import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { wakeText } from "../../../src/pi/wake-message.ts";

describe("wake prompt", () => {
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
});
