/**
 * Two SDK sessions in one process, on every host: each has its own jobs and listing, ids never repeat
 * in the process, and neither can reach the other's jobs (runtimes are keyed by each session's
 * SessionManager object).
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { offlinePi, type PiSdk } from "../../examples/lib/offline-pi.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";

/** The host package's own SDK entry point (dist/index.js beside dist/bundle/cli.js). */
async function loadSdk(cliPath: string): Promise<PiSdk> {
  return (await import(pathToFileURL(join(dirname(dirname(cliPath)), "index.js")).href)) as PiSdk;
}

for (const host of PI_HOSTS) {
  describe(`SDK sessions in one process on ${host.name}`, () => {
    it("never see each other's jobs", async () => {
      const sdk = await loadSdk(host.cliPath);
      const a = await offlinePi({ sdk, quiet: true });
      const b = await offlinePi({ sdk, quiet: true });
      try {
        await a.prompt(
          "start",
          steps(call("exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }), say("Done.")),
        );
        const started = a.calls[0]!.text;
        // Ids are unique in the process (another test's session may have drawn some already).
        const id = Number(/^\[still running\]\nsession_id: (\d+)\n/.exec(started)?.[1]);
        assert.ok(id > 0, started);
        await b.prompt(
          "look",
          steps(call("list_sessions", {}), call("write_stdin", { session_id: id, yield_time_ms: 5_000 }), say("Done.")),
        );
        const [pid] = pidsIn(started.slice(started.indexOf("---")));
        assert.ok(pid && processAlive(pid));
        assert.match(b.calls[0]!.text, /^\[0 sessions: 0 running, 0 exited\]/, "B lists nothing of A's");
        assert.match(b.calls[1]!.text, new RegExp(`Unknown session_id ${id}`), "B cannot reach A's job by its id");
        await a.prompt("stop", steps(call("kill_session", { session_id: id }), say("Done.")));
        assert.match(a.calls.at(-1)!.text, new RegExp(`^\\[killed\\]\\nsession_id: ${id}\\n`), "A still reaches its own job");
        await waitFor(() => !processAlive(pid), "A's job to end");
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
