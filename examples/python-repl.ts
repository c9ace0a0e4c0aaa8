/**
 * Example: drive a Python REPL on a pseudo-terminal.
 *
 * exec_command with tty: true starts `python3 -q`; write_stdin sends a line (submitted with \r, which
 * works on every platform) and reads the answer; exit() ends it. Run it with
 * `npm run example:python-repl`.
 */
import assert from "node:assert/strict";
import { callTool, offlinePi } from "./lib/offline-pi.ts";

const pi = await offlinePi();
const repl = (calls: { details: Record<string, unknown> }[]) => calls[0]!.details.session_id as number;

try {
  await pi.prompt("What is 6*7? Ask Python.", [
    callTool("exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 1_500 }),
    callTool("write_stdin", (calls) => ({ session_id: repl(calls), chars: "print(6*7)\\r", yield_time_ms: 1_500 })),
    callTool("write_stdin", (calls) => ({ session_id: repl(calls), chars: "exit()\\r", yield_time_ms: 5_000 })),
  ]);
} finally {
  await pi.close();
}

const [, answer, exited] = pi.calls;
assert.match(answer!.text, /\n---\nprint\(6\*7\)\n42\n>>> $/);
assert.match(exited!.text, /^\[exited\]\nexit_code: 0\n/);
console.log("\nexample ok: Python answered 42 and exited");
