/**
 * A dev server's ports and a job's memory through the real Pi CLI (RPC mode), with real servers
 * (Node's `http`, Python's `http.server`, one that binds then compiles for 2 s), on both hosts
 * (issues 53 and 54 are checked where they are used): a server that closes its port while its process lives wakes once (Pi settled, counted) and
 * the listing says what it lost; a job over a 300 MB cap is stopped with `killed_by: memory` and one
 * exit notice; a second server on a held port names session N, a port held outside Pi the pid and
 * command; `kill_session` says `ports_released` and a bind right after succeeds; `until_listening`
 * with a URL returns once the server answers, with its status; bad URLs start nothing; a job's
 * `oom_score_adj` is raised and Pi's is not; the listing shows a 200 MB job's memory within 20 %.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort } from "../helpers/bind-server.ts";
import { headerOf, isWake, outputOf, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";
import { bindsNow, memoryGrower, memoryHolder, nodeServer, outsideHolder, pythonServer } from "../helpers/servers.ts";

const SKIP = process.platform !== "linux" ? "reads sockets and memory from /proc (Linux)" : false;
const wakeText = (record: PiEvent) => textOf(record.message.content);
const idOf = (text: string) => Number(headerOf(text).session_id);

for (const host of PI_HOSTS) {
  describe(`ports and memory on ${host.name}`, { skip: SKIP }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION], env: { PI_UNIFIED_EXEC_MAX_JOB_RSS_MB: "300" } });
    });
    after(async () => {
      await pi?.close();
    });
    const stop = async (sessionId: number) => {
      await pi.waitIdle();
      await pi.run("stop it", steps(call("kill_session", { session_id: sessionId, signal: "SIGKILL" })));
    };

    it("a server that closes its port while its process lives wakes once, and the listing says what it lost", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const from = pi.records.length;
      const run = await pi.run(
        "serve",
        steps(
          call("exec_command", { cmd: nodeServer(port), until_listening: port, on_exit: "wake" }),
          (view) => call("write_stdin", { session_id: idOf(view.last[0]!.text), chars: "\n", until_pattern: "closed" }),
          say("closed it"),
        ),
      );
      const id = idOf(run.tools[0]!.text);
      const wake = await pi.waitForRecord((r) => isWake(r) && /stopped listening/.test(wakeText(r)), from, 20_000, "the deaf notice");
      assert.match(
        wakeText(wake),
        new RegExp(`session ${id} stopped listening while its processes run: listening: none \\(was :${port}, closed \\d+ s ago\\)`),
      );
      await pi.waitIdle();
      const listed = await pi.run("list", steps(call("list_sessions", {})));
      assert.match(listed.tools[0]!.text, new RegExp(`listening: none \\(was :${port}, closed \\d+ s ago\\)`));
      await pi.settle();
      assert.equal(pi.records.slice(from).filter(isWake).length, 1, "once per loss");
      await stop(id);
    });

    it("a job that grows past a 300 MB cap is stopped with killed_by memory and one exit notice", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const stamp = join(pi.dirs.root, "crossed");
      const run = await pi.run(
        "grow",
        steps(call("exec_command", { cmd: memoryGrower(50, 0.25, 250, stamp), on_exit: "wake", yield_time_ms: 250 }), say("started")),
      );
      const id = idOf(run.tools[0]!.text);
      const wake = await pi.waitForRecord(
        (r) => isWake(r) && new RegExp(`session ${id} · exit_code`).test(wakeText(r)),
        from,
        20_000,
        "the exit notice",
      );
      assert.match(wakeText(wake), new RegExp(`session ${id} · exit_code 137 \\(SIGKILL\\) · .*over the 300 MB cap`));
      await pi.settle();
      assert.equal(pi.records.slice(from).filter(isWake).length, 1, "one notice");
      assert.ok(existsSync(stamp), "it crossed the cap");
    });

    it("a second server on a held port names session N; a port held outside Pi names the pid and command", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const run = await pi.run(
        "serve twice",
        steps(
          call("exec_command", { cmd: nodeServer(port), until_listening: port }),
          call("exec_command", { cmd: nodeServer(port) }),
          say("two"),
        ),
      );
      const first = idOf(run.tools[0]!.text);
      const second = run.tools[1]!;
      assert.match(second.text, new RegExp(`port_conflict: ${port} held by session ${first} \\(node -e`), second.text);
      assert.match(String(second.structuredContent.port_conflict), new RegExp(`^${port} held by session ${first}`));
      await stop(first);
      const other = await freePort();
      const holder = await outsideHolder(other);
      try {
        await pi.waitIdle();
        const python = await pi.run("python", steps(call("exec_command", { cmd: pythonServer(other) }), say("no")));
        assert.match(
          python.tools[0]!.text,
          new RegExp(`port_conflict: ${other} held by pid ${holder.child.pid} \\(.*\\), not a job of this Pi`),
        );
      } finally {
        holder.stop();
      }
    });

    it("kill_session says ports_released and a bind right after succeeds", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const run = await pi.run(
        "serve and stop",
        steps(
          call("exec_command", { cmd: nodeServer(port), until_listening: port }),
          (view) => call("kill_session", { session_id: idOf(view.last[0]!.text) }),
          say("stopped"),
        ),
      );
      assert.match(run.tools[1]!.text, new RegExp(`ports_released: ${port}`));
      assert.equal(await bindsNow(port), true);
    });

    it("until_listening with a URL returns once the server answers, with its status; a path on the job's port too", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const python = await freePort();
      const run = await pi.run(
        "serve",
        steps(
          call("exec_command", {
            cmd: nodeServer(port, 2_000),
            until_listening: `http://127.0.0.1:${port}/health`,
            yield_time_ms: 20_000,
          }),
          call("exec_command", { cmd: pythonServer(python), until_listening: "/", yield_time_ms: 20_000 }),
          say("up"),
        ),
      );
      const [node, py] = run.tools;
      assert.equal(headerOf(node!.text).wait_status, "listening", node!.text);
      assert.equal(headerOf(node!.text).http_status, "200");
      assert.ok(Number(node!.structuredContent.wall_time_seconds) >= 2, "not at the bind");
      assert.match(outputOf(node!.text), /ready/);
      assert.equal(py!.structuredContent.http_status, 200);
      await stop(idOf(node!.text));
      await stop(idOf(py!.text));
    });

    it("bad URLs are refused before anything runs", async () => {
      await pi.waitIdle();
      const marker = join(pi.dirs.root, "never-spawned");
      const values = ["http://example.com/health", "https://127.0.0.1:3000/", "3000"];
      const run = await pi.run(
        "bad",
        steps(...values.map((value) => call("exec_command", { cmd: `touch ${marker}`, until_listening: value }))),
      );
      for (const [i, tool] of run.tools.entries()) {
        assert.equal(tool.isError, true, values[i]);
        assert.match(tool.text, /until_listening must be .*Nothing was started/);
      }
      assert.equal(existsSync(marker), false);
    });

    it("a job's oom_score_adj is raised and Pi's is not; the listing shows a 200 MB job's memory within 20 %", async () => {
      await pi.waitIdle();
      const run = await pi.run(
        "memory",
        steps(
          call("exec_command", { cmd: "cat /proc/self/oom_score_adj /proc/$PPID/oom_score_adj" }),
          call("exec_command", { cmd: memoryHolder(200), until_pattern: "holding" }),
          call("list_sessions", {}),
          say("seen"),
        ),
      );
      const [job, pi0] = outputOf(run.tools[0]!.text).trim().split("\n").map(Number);
      assert.equal(job, Math.min(1000, pi0! + 500), "the job's score is raised by 500 over Pi's");
      const id = idOf(run.tools[1]!.text);
      const listed = (run.tools[2]!.structuredContent.sessions as { session_id: number; memory_mb?: number }[]).find(
        (session) => session.session_id === id,
      );
      assert.ok(listed?.memory_mb && listed.memory_mb >= 160 && listed.memory_mb <= 240, `${listed?.memory_mb} MB`);
      await stop(id);
    });
  });
}
