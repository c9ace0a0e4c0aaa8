/**
 * Terminals that lose nothing and leak nothing, through the real Pi CLI on the newest host: the Pi
 * process's descriptors after 50 PTY jobs, writes to a raw-mode program that stops reading (the
 * call returns, Pi stays responsive, the job can be killed), and an interactive shell's background
 * job stopped with its session.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, callAll, firstSession, type ModelStep, say, steps } from "../helpers/scripted-model.ts";

const openDescriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

for (const host of NEWEST_HOST_ONLY) {
  describe(`PTY integrity on ${host.name}`, { skip: SKIP_WITHOUT_PTY }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("50 PTY jobs leave the Pi process with no more descriptors than before", async () => {
      // One warm-up job: Pi opens what it keeps (the log directory, the PTY module) on first use.
      await pi.run("warm up", steps(call("exec_command", { cmd: "echo warm", tty: true })));
      const before = openDescriptors(pi.pid);
      const run = await pi.run("fifty terminals", (view) =>
        view.turn < 5
          ? {
              toolCalls: Array.from({ length: 10 }, (_, i) => ({
                name: "exec_command",
                arguments: { cmd: `echo job ${view.turn * 10 + i}`, tty: true },
              })),
            }
          : say("done"),
      );
      assert.equal(run.tools.length, 50);
      assert.ok(
        run.tools.every((tool) => headerOf(tool.text).exit_code === "0"),
        run.tools.map((tool) => tool.text).join("\n"),
      );
      // A descriptor may be in use for a moment after the calls (a log file still closing, a read of
      // /proc): a leak is one that stays.
      await waitFor(() => openDescriptors(pi.pid) <= before, `descriptors back to ${before} (now ${openDescriptors(pi.pid)})`, 5_000);
    });

    for (const size of [64 * 1024, 1024 * 1024, 10 * 1024 * 1024]) {
      it(`a ${size / 1024} KiB write to a raw-mode program that stops reading returns within its window; list and kill answer`, async () => {
        const payload = Buffer.alloc(size, 0x61).toString("base64");
        const run = await pi.run(
          "raw writes",
          steps(
            call("exec_command", {
              cmd: "stty raw -echo; echo ready; sleep 300",
              tty: true,
              until_pattern: "^ready",
              yield_time_ms: 10_000,
            }),
            (view) =>
              callAll(["write_stdin", { session_id: firstSession(view), chars_b64: payload, yield_time_ms: 2_000 }], ["list_sessions", {}]),
            (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
          ),
          120_000,
        );
        const [, write, list, kill] = inCallOrder(run);
        assert.equal(write!.isError, false, write!.text);
        assert.ok(write!.durationMs! < 10_000, `the write took ${write!.durationMs} ms`);
        assert.equal(list!.isError, false);
        assert.ok(list!.durationMs! < 5_000, `the listing waited ${list!.durationMs} ms for the write`);
        const header = headerOf(write!.text);
        if (size > 1024 * 1024) {
          assert.ok(Number(header.input_refused_bytes) > 0, write!.text);
          assert.match(header.failure_message ?? "", /stdin is full/);
        }
        assert.ok(Number(header.input_pending_bytes ?? 0) <= 1024 * 1024, write!.text);
        assert.equal(headerOf(kill!.text).signal, "SIGKILL", kill!.text);
        // A fresh transcript: the payload is in this one, and every later model request would carry it.
        assert.equal((await pi.request({ type: "new_session" })).success, true);
      });
    }

    it("kill_session stops an interactive shell's background job with it", async () => {
      const run = await pi.run(
        "bash -i",
        steps(
          call("exec_command", { cmd: "bash --norc --noprofile -i", tty: true, until_quiet_ms: 300, yield_time_ms: 10_000 }),
          (view) =>
            call("write_stdin", {
              session_id: firstSession(view),
              chars: "sleep 90 & echo BG=$!\\r",
              until_pattern: "^BG=[0-9]+",
              yield_time_ms: 10_000,
            }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const [, started, killed] = run.tools;
      const pid = Number(/BG=(\d+)/.exec(outputOf(started!.text))?.[1]);
      assert.ok(pid > 0, started!.text);
      assert.equal(headerOf(killed!.text).cleanup, "confirmed", killed!.text);
      assert.equal(processAlive(pid), false, "the background job outlived its shell");
    });
  });

  describe(`quitting with an interactive shell's background job on ${host.name}`, { skip: SKIP_WITHOUT_PTY }, () => {
    it("quit stops the whole session of a PTY job", async () => {
      const pi = await PiRpcHost.start(host);
      const bash: ModelStep = call("exec_command", {
        cmd: "bash --norc --noprofile -i",
        tty: true,
        until_quiet_ms: 300,
        yield_time_ms: 10_000,
      });
      const run = await pi.run(
        "bash -i",
        steps(bash, (view) =>
          call("write_stdin", {
            session_id: firstSession(view),
            chars: "sleep 90 & echo BG=$!\\r",
            until_pattern: "^BG=[0-9]+",
            yield_time_ms: 10_000,
          }),
        ),
      );
      const pid = Number(/BG=(\d+)/.exec(outputOf(run.tools[1]!.text))?.[1]);
      assert.ok(processAlive(pid));
      const exit = await pi.close();
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(processAlive(pid), false, "the background job outlived Pi");
    });
  });
}
