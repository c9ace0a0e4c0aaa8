/**
 * Example: start a dev server, check it answers, read its request log, then stop it.
 *
 * The agent starts the server with exec_command; the call returns after its window with a
 * session_id while the server keeps running. A second command checks /health. A poll shows the
 * request the server logged; kill_session stops it. Run it with `npm run example:dev-server`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { call, firstSession, type ModelView, say, steps } from "./lib/model-script.ts";
import { offlinePi } from "./lib/offline-pi.ts";

const server = fileURLToPath(new URL("./lib/dev-server.mjs", import.meta.url));
const pi = await offlinePi();
const serverUrl = (view: ModelView) => /listening on (http:\/\/\S+)/.exec(view.results[0]!.text)![1];

try {
  await pi.prompt(
    "Start the dev server, check that it is healthy, then stop it.",
    steps(
      call("exec_command", { cmd: `node ${server}`, yield_time_ms: 1_500 }),
      (view) => call("exec_command", { cmd: `node -e "fetch('${serverUrl(view)}/health').then((r) => console.log('status', r.status))"` }),
      (view) => call("write_stdin", { session_id: firstSession(view), yield_time_ms: 5_000 }),
      (view) => call("kill_session", { session_id: firstSession(view) }),
      say("Done."),
    ),
  );
} finally {
  await pi.close();
}

const [started, health, log, killed] = pi.calls;
assert.match(started!.text, /^\[still running\]\nsession_id: \d+\n[\s\S]*listening on http:/);
assert.match(health!.text, /\nstatus 200\n$/);
assert.match(log!.text, /GET \/health\n/);
assert.match(killed!.text, /^\[killed\]\n[\s\S]*cleanup: confirmed/);
console.log("\nexample ok: the server answered 200 and was stopped");
