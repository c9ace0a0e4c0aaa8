/**
 * `until_listening` and the input wake through the real Pi CLI (RPC mode) on both hosts: a
 * wait that ends soon after a server's bind and names the address, a port that ends it and not
 * another the job binds first, a server that probes its port (listens and closes) before it binds
 * reported only once it listens, bad values refused with nothing spawned; a prompt-blocked job with a
 * wake armed wakes once with its prompt line and the answer reaches it, and nothing more once Pi
 * settles (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2`). A job with no wake armed never waking is the input
 * wake's rule (`input-wakes.test.ts`, `runtime.input-wake.test.ts`).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { bindServer, binds, freePort, probingServer } from "../helpers/bind-server.ts";
import { headerOf, isWake, outputOf, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";

const SKIP = process.platform !== "linux" ? "reads sockets and input waits from /proc (Linux)" : false;
const wakeText = (record: PiEvent) => textOf(record.message.content);
const inputWake = (record: PiEvent) => isWake(record) && /waits for input/.test(wakeText(record));
const sessionIn = (text: string) => Number(/session (\d+)/.exec(text)?.[1]);
const PROMPT_JOB = "printf 'building\\nOverwrite config.json? [y/N] '; read answer; echo \"got $answer\"; sleep 300";

for (const host of PI_HOSTS) {
  describe(`until_listening and the input wake on ${host.name}`, { skip: SKIP }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION], env: { PI_UNIFIED_EXEC_INPUT_WAKE_S: "2" } });
    });
    after(async () => {
      await pi?.close();
    });
    const stop = async (sessionId: number) => {
      await pi.waitIdle();
      await pi.run("stop it", steps(call("kill_session", { session_id: sessionId, signal: "SIGKILL" })));
    };

    it("until_listening: true returns soon after the bind with wait_status listening and the address", async () => {
      await pi.waitIdle();
      const stamp = join(pi.dirs.root, "bound");
      const ended = pi
        .waitForRecord((record) => record.type === "tool_execution_end", pi.records.length, 30_000, "the result")
        .then(() => Date.now());
      const run = await pi.run(
        "serve",
        steps(
          call("exec_command", { cmd: bindServer({ ports: [0], delay: 1, gap: 0, stamp }), until_listening: true, yield_time_ms: 20_000 }),
          say("up"),
        ),
      );
      const result = run.tools[0]!;
      const header = headerOf(result.text);
      assert.equal(header.wait_status, "listening", result.text);
      assert.match(String(header.listening), /^127\.0\.0\.1:\d+$/);
      const lag = (await ended) - binds(stamp)[0]![1];
      assert.ok(lag < 800, `the result came ${lag} ms after the bind`);
      await stop(Number(header.session_id));
    });

    it("until_listening: PORT waits for that port and not another the job binds first", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const run = await pi.run(
        "serve",
        steps(
          call("exec_command", {
            cmd: bindServer({ ports: [0, port], delay: 0.2, gap: 1.5 }),
            until_listening: port,
            yield_time_ms: 20_000,
          }),
          say("up"),
        ),
      );
      const result = run.tools[0]!;
      assert.equal(headerOf(result.text).wait_status, "listening", result.text);
      assert.ok((result.structuredContent.listening as string[]).includes(`127.0.0.1:${port}`));
      assert.equal((result.structuredContent.listening as string[]).length, 2, "the other port first");
      assert.ok(Number(result.structuredContent.wall_time_seconds) >= 1.5);
      await stop(Number(headerOf(result.text).session_id));
    });

    it("a server that probes its port before it binds is reported only once it listens", async () => {
      await pi.waitIdle();
      const port = await freePort();
      const stamp = join(pi.dirs.root, "probed");
      const ended = pi
        .waitForRecord((record) => record.type === "tool_execution_end", pi.records.length, 30_000, "the result")
        .then(() => Date.now());
      const run = await pi.run(
        "serve",
        steps(call("exec_command", { cmd: probingServer(port, stamp), until_listening: port, yield_time_ms: 20_000 }), say("up")),
      );
      const result = run.tools[0]!;
      const header = headerOf(result.text);
      assert.equal(header.wait_status, "listening", result.text);
      assert.equal(header.listening, `127.0.0.1:${port}`, result.text);
      assert.ok(existsSync(stamp), `the result came before the real listen:\n${result.text}`);
      assert.ok((await ended) >= Number(readFileSync(stamp, "utf8")));
      await stop(Number(header.session_id));
    });

    it("a bad until_listening is refused before anything runs", async () => {
      await pi.waitIdle();
      const marker = join(pi.dirs.root, "never-spawned");
      const values = [0, 70_000, "abc", 1.5];
      const run = await pi.run(
        "bad",
        steps(...values.map((value) => call("exec_command", { cmd: `touch ${marker}`, until_listening: value }))),
      );
      for (const [i, tool] of run.tools.entries()) {
        assert.equal(tool.isError, true, String(values[i]));
        assert.match(tool.text, /until_listening must be true .* or a TCP port from 1 to 65535, got .*Nothing was started/);
      }
      assert.equal(existsSync(marker), false);
    });

    it("a prompt-blocked job with a wake armed wakes once with the prompt line, and the answer reaches it", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const answered: string[] = [];
      pi.setWakeScript(
        steps(
          (view) => call("write_stdin", { session_id: sessionIn(view.prompt), chars: "y\n", until_pattern: "got", yield_time_ms: 5_000 }),
          (view) => {
            answered.push(view.last[0]!.text);
            return say("answered");
          },
        ),
      );
      try {
        const run = await pi.run(
          "init",
          steps(call("exec_command", { cmd: PROMPT_JOB, on_exit: "wake", yield_time_ms: 250 }), say("started")),
        );
        const id = Number(headerOf(run.tools[0]!.text).session_id);
        const wake = await pi.waitForRecord(inputWake, from, 20_000, "the input wake");
        const text = wakeText(wake);
        assert.match(text, new RegExp(`session ${id} waits for input`));
        assert.match(text, /last line: Overwrite config\.json\? \[y\/N\]/);
        assert.match(text, /write_stdin.*ask_user.*kill_session/s);
        assert.doesNotMatch(text, /^building$/m, "never other output");
        await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 15_000, "the wake's turn");
        assert.match(outputOf(answered[0]!), /got y/);
        await pi.settle();
        assert.equal(pi.records.slice(from).filter(isWake).length, 1, "once");
        await stop(id);
      } finally {
        pi.setWakeScript(() => say("noted"));
      }
    });
  });
}
