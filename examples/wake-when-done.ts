/**
 * Example: start a long job and be woken when it finishes, instead of polling.
 *
 * exec_command with on_exit: "wake" returns at once with a session_id; the turn ends. When the job
 * exits, exactly one follow-up prompt announces it (with the exit code, never the output), and the job
 * can still be read once. Run it with `npm run example:wake-when-done`.
 */
import assert from "node:assert/strict";
import { call, say, steps } from "./lib/model-script.ts";
import { offlinePi } from "./lib/offline-pi.ts";

const pi = await offlinePi();

try {
  await pi.prompt(
    "Run the test suite and tell me when it is done.",
    steps(
      call("exec_command", { cmd: "echo running tests; sleep 2; printf '%s passed\\n' 12", yield_time_ms: 500, on_exit: "wake" }),
      say("The tests are running; I will report when they finish."),
    ),
  );
  pi.answerWakes(() => say("The tests finished with exit code 0."));
  await pi.settledAfterWakes(1);
  // Nothing more arrives: the wake is delivered exactly once.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // The job started in the first prompt: its session_id is in that prompt's first result.
  const job = pi.calls[0]!.details.session_id as number;
  await pi.prompt("Show me the rest of the output.", steps(call("write_stdin", { session_id: job }), say("Done.")));
} finally {
  await pi.close();
}

assert.match(pi.calls[0]!.text, /completion_notification: armed/);
assert.equal(pi.wakes.length, 1);
assert.match(pi.wakes[0]!, /session \d+ · exit_code 0/);
assert.doesNotMatch(pi.wakes[0]!, /12 passed/, "a wake carries metadata, never output");
assert.match(pi.calls[1]!.text, /^\[exited\]\nexit_code: 0\n[\s\S]*---\n12 passed\n$/);
console.log("\nexample ok: exactly one wake, and the output was still there to read");
