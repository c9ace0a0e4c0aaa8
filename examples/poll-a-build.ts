/**
 * Example: a long build the agent starts, leaves running, and polls until it exits.
 *
 * The first call returns after its window with a session_id; a poll returns only the output that
 * arrived since, and the exit. Run it with `npm run example:poll-a-build`.
 */
import assert from "node:assert/strict";
import { call, firstSession, say, steps } from "./lib/model-script.ts";
import { offlinePi } from "./lib/offline-pi.ts";

const build = "for step in compile link test; do echo \"$step...\"; sleep 0.7; done; echo 'build ok'";
const pi = await offlinePi();

try {
  await pi.prompt(
    "Run the build and tell me when it is done.",
    steps(
      call("exec_command", { cmd: build, yield_time_ms: 500 }),
      (view) => call("write_stdin", { session_id: firstSession(view), yield_time_ms: 10_000 }),
      say("Done."),
    ),
  );
} finally {
  await pi.close();
}

const [started, polled] = pi.calls;
assert.match(started!.text, /^\[still running\]\nsession_id: 1\n/);
assert.match(polled!.text, /^\[exited\]\nexit_code: 0\n[\s\S]*build ok\n$/);
assert.doesNotMatch(polled!.text, /compile/, "a poll returns only output that arrived after the previous call");
console.log("\nexample ok: the build ran as session 1 and its exit was reported once");
