/**
 * Example: drive a Python REPL on a pseudo-terminal.
 *
 * exec_command with tty: true starts `python3 -q` and returns at its first `>>> ` prompt (until_pattern); write_stdin sends a line (submitted with \r, which
 * works on every platform) and reads the answer; exit() ends it. Run it with
 * `npm run example:python-repl`.
 */
import assert from "node:assert/strict";
import { call, firstSession, say, steps } from "./lib/model-script.ts";
import { offlinePi } from "./lib/offline-pi.ts";

const pi = await offlinePi();
try {
  await pi.prompt(
    "What is 6*7? Ask Python.",
    steps(
      // Returns once Python shows its prompt, however slow it is to start.
      call("exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $", yield_time_ms: 20_000 }),
      (view) => call("write_stdin", { session_id: firstSession(view), chars: "print(6*7)\\r", yield_time_ms: 1_500 }),
      (view) => call("write_stdin", { session_id: firstSession(view), chars: "exit()\\r", yield_time_ms: 5_000 }),
      say("Done."),
    ),
  );
} finally {
  await pi.close();
}

const [, answer, exited] = pi.calls;
assert.match(answer!.text, /\n---\nprint\(6\*7\)\n42\n>>> $/);
assert.match(exited!.text, /^\[exited\]\nexit_code: 0\n/);
console.log("\nexample ok: Python answered 42 and exited");
