/**
 * Example: start a dev server, check it answers, read its request log, then stop it.
 *
 * The agent starts the server with exec_command; the call returns after its window with a
 * session_id while the server keeps running. A second command checks /health. A poll shows the
 * request the server logged; kill_session stops it. Run it with `npm run example:dev-server`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { callTool, offlinePi } from "./lib/offline-pi.ts";

const server = fileURLToPath(new URL("./lib/dev-server.mjs", import.meta.url));
const pi = await offlinePi();
const serverSession = (calls: { details: Record<string, unknown> }[]) => calls[0]!.details.session_id as number;
const serverUrl = (calls: { text: string }[]) => /listening on (http:\/\/\S+)/.exec(calls[0]!.text)![1];

try {
  await pi.prompt("Start the dev server, check that it is healthy, then stop it.", [
    callTool("exec_command", { cmd: `node ${server}`, yield_time_ms: 1_500 }),
    callTool("exec_command", (calls) => ({
      cmd: `node -e "fetch('${serverUrl(calls)}/health').then((r) => console.log('status', r.status))"`,
    })),
    callTool("write_stdin", (calls) => ({ session_id: serverSession(calls), yield_time_ms: 5_000 })),
    callTool("kill_session", (calls) => ({ session_id: serverSession(calls) })),
  ]);
} finally {
  await pi.close();
}

const [started, health, log, killed] = pi.calls;
assert.match(started!.text, /^\[still running\]\nsession_id: \d+\n[\s\S]*listening on http:/);
assert.match(health!.text, /\nstatus 200\n$/);
assert.match(log!.text, /GET \/health\n/);
assert.match(killed!.text, /^\[killed\]\n[\s\S]*cleanup: confirmed/);
console.log("\nexample ok: the server answered 200 and was stopped");
