/**
 * No job outside the registry across reloads, through the real Pi CLI on every host: PTY REPLs and
 * pipe jobs carried over several `/reload`s — two back to back with no call between, one right after
 * a wake's turn, one after a call that failed — then the model lists every
 * job and SIGKILLs each listed id. Pi must then hold what it held after its warm-up (no terminal, no
 * job log, no job process), and after it quits no process may carry one of its jobs' markers.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isWake } from "../helpers/events.ts";
import { type HeldBy, heldBy, markedProcesses } from "../helpers/held-by.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { callAll, type ModelView, say } from "../helpers/scripted-model.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");
const REPL = ["exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $", yield_time_ms: 20_000 }] as const;

for (const host of PI_HOSTS) {
  describe(`jobs carried across reloads on ${host.name}`, () => {
    let pi: PiRpcHost;
    let reloads = 0;
    const reload = async () => {
      await pi.waitIdle(60_000);
      const marker = join(pi.dirs.root, `reloaded-${++reloads}`);
      await pi.run(`/test-reload ${marker}`, () => say("ok"));
      await waitFor(() => existsSync(marker), "the reload", 30_000);
    };
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE] });
    });
    after(async () => {
      await pi?.close(60_000);
    });

    it("are all listed and killable afterwards, and nothing of them is held or left", async () => {
      await pi.run("warm up", (view) => (view.turn === 0 ? callAll(["exec_command", { cmd: "true" }]) : say("ok")));
      const warmUp = heldBy(pi.pid, pi.dirs.logs);
      await pi.run("start", (view) =>
        view.turn === 0 ? callAll([...REPL], [...REPL], ["exec_command", { cmd: "sleep 300", yield_time_ms: 250 }]) : say("ok"),
      );
      await reload();
      await reload(); // back to back: the runtime the first adopted is parked again before any call
      const beforeMore = pi.records.length;
      await pi.run("more", (view) =>
        view.turn === 0
          ? callAll([...REPL], ["exec_command", { cmd: "sleep 0.3; echo late", yield_time_ms: 250, on_exit: "wake" }])
          : say("ok"),
      );
      await pi.waitForRecord(isWake, beforeMore, 30_000, "the wake");
      await reload(); // after the wake's turn
      await pi.waitIdle(60_000);
      await pi.run("again", (view) => (view.turn === 0 ? callAll([...REPL], ["write_stdin", { session_id: 999_999 }]) : say("ok")));
      await reload();

      await pi.waitIdle(60_000);
      let listed: { session_id: number; status: string }[] = [];
      await pi.run("stop everything", (view: ModelView) => {
        if (view.turn === 0) return callAll(["list_sessions", {}]);
        if (view.turn === 1) {
          listed = view.last[0]?.details?.sessions ?? [];
          const live = listed.filter((session) => session.status === "running");
          return callAll(
            ...live.map(
              (session) => ["kill_session", { session_id: session.session_id, signal: "SIGKILL" }] as [string, Record<string, unknown>],
            ),
          );
        }
        return say("ok");
      });
      assert.equal(listed.filter((session) => session.status === "running").length, 5, `listed ${JSON.stringify(listed)}`);
      let now: HeldBy = heldBy(pi.pid, pi.dirs.logs);
      // None of a job's terminal, log or processes is left (a warm shell caught while it starts counts as neither).
      const settled = () => now.terminals === 0 && now.logs === 0 && now.jobProcesses === 0;
      await waitFor(
        () => {
          now = heldBy(pi.pid, pi.dirs.logs);
          return settled();
        },
        "Pi to hold no more than after its warm-up",
        15_000,
        100,
      ).catch(() => assert.fail(`after the kills Pi holds ${JSON.stringify(now)}; after its warm-up ${JSON.stringify(warmUp)}`));
      const logs = pi.dirs.logs;
      await pi.close(60_000);
      assert.deepEqual(markedProcesses(logs), [], "no process of a job outlives Pi");
    });
  });
}
