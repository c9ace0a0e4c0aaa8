/**
 * A shell that leaves processes running keeps its job (issue 37), through the real Pi CLI (RPC mode)
 * on both hosts: a server started with `&` stays a job with its port and is stopped whole by
 * kill_session (which says it killed it: SIGTERM, not the shell's 0); a background subshell's later
 * output is returned by a poll; `(…) & exit 3` with an exit wake wakes once with exit code 3; one
 * stopped by its deadline wakes and is listed as killed at its deadline; on a PTY, `nohup … &` as the
 * last statement (Node's too) and a plain `&` keep the job; a setsid daemon does not.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, type ToolRecord } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { escapedDaemonThenExit } from "../helpers/jobs.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";

/** The pids a `background:` line names. */
const namedPids = (line: string | undefined) => [...(line ?? "").matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
/** Living processes whose command line holds `marker` (pgrep -f), this test's own excepted. */
const running = (marker: string) =>
  (spawnSync("pgrep", ["-f", marker], { encoding: "utf8" }).stdout ?? "")
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);

for (const host of PI_HOSTS) {
  describe(`a shell that leaves processes running keeps its job on ${host.name}`, { skip: process.platform === "win32" }, () => {
    let pi: PiRpcHost;
    const scratch = mkdtempSync(join(tmpdir(), "pi-unified-exec-bg-"));
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
      rmSync(scratch, { recursive: true, force: true });
    });
    const one = async (name: string, args: Record<string, unknown>): Promise<ToolRecord> => {
      await pi.waitIdle();
      const run = await pi.run(name, steps(call(name, args)));
      return run.tools[0]!;
    };

    it("`python3 -m http.server 0 > /dev/null 2>&1 &` stays a job with its port in list_sessions, and kill_session leaves no process", async () => {
      const marker = mkdtempSync(join(scratch, "www-"));
      const started = await one("exec_command", {
        cmd: `python3 -m http.server 0 --bind 127.0.0.1 --directory ${marker} > /dev/null 2>&1 &`,
      });
      const header = headerOf(started.text);
      assert.equal(started.text.split("\n")[0], "[still running]", started.text);
      assert.equal(header.shell_exit_code, "0");
      assert.match(header.background ?? "", /still runs?: .*\(pid \d+\).*; kill_session stops (it|them)$/);
      assert.ok(Number(header.wall_time_seconds) < 5, `returned after ${header.wall_time_seconds} s, not at the end of its window`);
      const sessionId = Number(header.session_id);
      // The server binds once Python has started (slowly on a loaded machine): list until it listens.
      let listed: Record<string, any> | undefined;
      const deadline = performance.now() + 20_000;
      while (!(listed?.listening?.length > 0) && performance.now() < deadline) {
        const listing = await one("list_sessions", {});
        listed = listing.structuredContent.sessions.find((session: { session_id: number }) => session.session_id === sessionId);
        if (!(listed?.listening?.length > 0)) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.equal(listed?.status, "running");
      assert.equal(listed?.shell_exit_code, 0);
      assert.match(listed?.listening[0], /^127\.0\.0\.1:\d+$/);
      assert.ok(running(marker).length > 0, "the server runs");
      const killed = await one("kill_session", { session_id: sessionId });
      assert.equal(killed.isError, false, killed.text);
      // Killed, not succeeded: the stop's signal, not the shell's code, in the text, structuredContent and details.
      assert.equal(headerOf(killed.text).exit_code, "143", killed.text);
      assert.equal(headerOf(killed.text).signal, "SIGTERM", killed.text);
      assert.deepEqual([killed.structuredContent.exit_code, killed.structuredContent.signal], [143, "SIGTERM"]);
      assert.deepEqual([killed.details.exit_code, killed.details.signal], [143, "SIGTERM"]);
      await waitFor(() => running(marker).length === 0, "no process of the server left", 5_000);
    });

    it("a background subshell's later output is returned by a poll", async () => {
      const started = await one("exec_command", { cmd: "(sleep 1.5; echo late; sleep 30) & echo started" });
      assert.equal(outputOf(started.text), "started\n");
      const sessionId = Number(headerOf(started.text).session_id);
      assert.ok(sessionId > 0, started.text);
      const polled = await one("write_stdin", { session_id: sessionId, until_pattern: "late", yield_time_ms: 15_000 });
      assert.equal(outputOf(polled.text), "late\n");
      assert.equal(headerOf(polled.text).wait_status, "matched");
      await one("kill_session", { session_id: sessionId });
    });

    it("`(sleep 2; echo bye) & exit 3` with on_exit wake wakes once, with exit code 3", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const run = await pi.run(
        "wake me",
        steps(call("exec_command", { cmd: "(sleep 2; echo bye) & exit 3", on_exit: "wake" }), say("started it")),
      );
      const started = run.tools[0]!;
      const header = headerOf(started.text);
      assert.equal(header.shell_exit_code, "3", started.text);
      assert.equal(header.completion_notification, "armed");
      const wake = await pi.waitForRecord(isWake, from, 20_000, "the wake");
      await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 15_000, "the wake's turn");
      assert.match(wake.message.content, new RegExp(`session ${header.session_id} · exit_code 3`));
      await pi.settle();
      assert.equal(pi.records.slice(from).filter(isWake).length, 1, "exactly one wake");
    });

    it("`sleep 300 &` stopped by its timeout_s wakes once saying it was killed at its deadline, and is listed so", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const run = await pi.run(
        "deadline",
        steps(call("exec_command", { cmd: "sleep 300 & exit 0", on_exit: "wake", timeout_s: 2 }), say("started it")),
      );
      const header = headerOf(run.tools[0]!.text);
      assert.equal(header.shell_exit_code, "0", run.tools[0]!.text);
      const wake = await pi.waitForRecord(isWake, from, 20_000, "the wake");
      await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 15_000, "the wake's turn");
      assert.match(wake.message.content, new RegExp(`session ${header.session_id} · exit_code 143 \\(SIGTERM\\) · .*timeout_s deadline`));
      const listing = await one("list_sessions", {});
      const listed = listing.structuredContent.sessions.find(
        (session: { session_id: number }) => session.session_id === Number(header.session_id),
      );
      assert.deepEqual(
        [listed?.exit_code, listed?.signal, listed?.timed_out, listed?.killed_by],
        [143, "SIGTERM", true, "deadline"],
        listing.text,
      );
    });

    for (const [what, cmd] of [
      ["`nohup server > log 2>&1 &` as its last statement", `nohup sleep 300 > ${join(scratch, "nohup.log")} 2>&1 &`],
      ["a plain `server &`", "sleep 300 &"],
      [
        "`nohup node server.js > log 2>&1 &`, Node resetting SIGHUP as it starts",
        `nohup '${process.execPath}' -e 'setInterval(() => {}, 1000)' > ${join(scratch, "node.log")} 2>&1 &`,
      ],
    ])
      it(`${what} on a PTY keeps the job`, async () => {
        const started = await one("exec_command", { cmd, tty: true });
        const header = headerOf(started.text);
        assert.equal(started.text.split("\n")[0], "[still running]", started.text);
        assert.equal(header.shell_exit_code, "0");
        const [server] = namedPids(header.background);
        assert.ok(server && processAlive(server), started.text);
        await one("kill_session", { session_id: Number(header.session_id) });
        await waitFor(() => !processAlive(server), "the server to end", 5_000);
      });

    it("a setsid daemon does not hold the job: its exit is reported, the daemon runs on outside it", async () => {
      const started = await one("exec_command", { cmd: escapedDaemonThenExit() });
      const [daemon] = pidsIn(outputOf(started.text));
      try {
        assert.equal(started.text.split("\n")[0], "[exited]", started.text);
        assert.equal(headerOf(started.text).exit_code, "0");
        assert.ok(daemon && processAlive(daemon), "the daemon lives on outside the job");
      } finally {
        if (daemon) process.kill(daemon, "SIGKILL");
      }
    });
  });
}
