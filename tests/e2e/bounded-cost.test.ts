/**
 * Patterns and port scans with a bounded cost, through the real Pi CLI (RPC mode) on the newest
 * host, Pi running under a child subreaper (as under `systemd --user`): a pattern whose counted
 * repeats would leave the engine's DFA is refused, naming the part, before anything spawns or
 * changes; a server a job detached with `(setsid … &)` is re-parented to the subreaper, not to pid
 * 1, and is still listed with its listening address (the job's marker attributes it).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { call, steps } from "../helpers/scripted-model.ts";
import { SUBREAPER } from "../helpers/sockets.ts";

/** The parent pid of `pid`, from /proc. */
const parentOf = (pid: number) => Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

for (const host of NEWEST_HOST_ONLY) {
  describe(`bounded costs on ${host.name}, Pi under a subreaper`, { skip: process.platform !== "linux" && "Linux only" }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { wrapper: ["python3", SUBREAPER] });
    });
    after(async () => {
      await pi?.close();
    });

    it("a pattern with a wide counted repeat is refused, naming it, before anything spawns or changes", async () => {
      const marker = join(pi.dirs.root, "never-spawned");
      await pi.waitIdle();
      const run = await pi.run(
        "costly patterns",
        steps(
          call("exec_command", { cmd: `touch ${marker}`, wake_on_pattern: "(?i)error.{0,300}timeout" }),
          call("exec_command", { cmd: `touch ${marker}`, until_pattern: "a[ab]{490}[cd]", yield_time_ms: 1_000 }),
          call("exec_command", { cmd: "sleep 300", wake_on_pattern: "ERROR", yield_time_ms: 250 }),
          (view) => call("set_on_exit", { session_id: view.last[0]!.details.session_id, wake_on_pattern: "(?i)warn.{0,50}retry" }),
          (view) => call("write_stdin", { session_id: view.results[2]!.details.session_id, chars: "x\n", until_pattern: "x.{20}y" }),
          () => call("list_sessions", {}),
        ),
      );
      const [wake, until, started, changed, written, list] = run.tools;
      assert.equal(wake!.isError, true);
      assert.match(wake!.text, /wake_on_pattern repeats `\.\{0,300\}` at character 10 up to 300 times.*Use `\.\*`.*Nothing was started/);
      assert.equal(until!.isError, true);
      assert.match(until!.text, /until_pattern repeats `\[ab\]\{490\}` at character 2 up to 490 times/);
      assert.equal(existsSync(marker), false, "nothing spawned");
      assert.equal(changed!.isError, true);
      assert.match(changed!.text, /wake_on_pattern repeats `\.\{0,50\}`.*Nothing was changed/);
      assert.equal(written!.isError, true);
      assert.match(written!.text, /until_pattern repeats `\.\{20\}`/);
      assert.match(list!.text, /wake_on_pattern: ERROR/, "the pattern armed before stays");
      await pi.run("stop it", steps(call("kill_session", { session_id: Number(headerOf(started!.text).session_id), signal: "SIGKILL" })));
    });

    it("a server the job detached is re-parented to the subreaper and still listed with its address", async () => {
      const server =
        "python3 -c \"import os,socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); " +
        "print('pid', os.getpid(), 'port', s.getsockname()[1], flush=True); time.sleep(60)\"";
      await pi.waitIdle();
      const started = await pi.run(
        "detach a server",
        steps(call("exec_command", { cmd: `(setsid ${server} &); sleep 30`, until_pattern: "port \\d+", yield_time_ms: 15_000 })),
      );
      const out = outputOf(started.tools[0]!.text);
      const serverPid = Number(/pid (\d+)/.exec(out)?.[1]);
      const port = /port (\d+)/.exec(out)?.[1];
      assert.ok(serverPid && port, started.tools[0]!.text);
      try {
        await waitFor(() => parentOf(serverPid) === pi.pid, "the server re-parented to the subreaper", 10_000);
        const listed = await pi.run("list", steps(call("list_sessions", {})));
        assert.match(listed.tools[0]!.text, new RegExp(`listening: 127\\.0\\.0\\.1:${port}`), listed.tools[0]!.text);
        const id = Number(headerOf(started.tools[0]!.text).session_id);
        const poll = await pi.run("poll", steps(call("write_stdin", { session_id: id, yield_time_ms: 250 })));
        assert.deepEqual(poll.tools[0]!.structuredContent.listening, [`127.0.0.1:${port}`]);
        await pi.run("stop it", steps(call("kill_session", { session_id: id, signal: "SIGKILL" })));
      } finally {
        try {
          process.kill(serverPid, "SIGKILL");
        } catch {
          // gone already
        }
      }
    });
  });
}
