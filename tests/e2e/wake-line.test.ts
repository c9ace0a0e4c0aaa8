/**
 * The line a pattern wake quotes, through the real Pi CLI (RPC mode) on every host: a 420-character
 * line with its match near the end is quoted as a window around the match (at most 300 characters,
 * `…` where cut); `(?i)ſtatus` wakes on a plain `status` line and `(?i)` with the Kelvin sign on a
 * plain `KELVIN` line, as RE2 matches them (the prefilter folds as RE2 does).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";

const wakeText = (record: PiEvent) => textOf(record.message.content);

for (const host of PI_HOSTS) {
  describe(`the line a pattern wake quotes, on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY] });
    });
    after(async () => {
      await pi?.close();
    });
    /** Starts `cmd` with `pattern` armed; returns its id once the wake it causes has come and its turn settled. */
    const wakeOf = async (cmd: string, pattern: string): Promise<{ id: number; text: string }> => {
      await pi.waitIdle();
      const from = pi.records.length;
      const run = await pi.run(
        "start it",
        steps(call("exec_command", { cmd, wake_on_pattern: pattern, yield_time_ms: 250 }), say("started")),
      );
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      const wake = await pi.waitForRecord(isWake, from, 20_000, "the pattern wake");
      await pi.waitIdle();
      await pi.run("stop it", steps(call("kill_session", { session_id: id, signal: "SIGKILL" }), say("stopped")));
      return { id, text: wakeText(wake) };
    };

    it("a 420-character line with ERROR near its end is quoted as a window of at most 300 characters around the match", async () => {
      const { id, text } = await wakeOf(
        `sleep 1; printf '%s ERROR disk full %s\\n' "$(printf 'a%.0s' $(seq 380))" bbbbbbbbbbbbbbbbbbbb; sleep 300`,
        "ERROR",
      );
      assert.match(text, new RegExp(`session ${id} printed a line matching /ERROR/`));
      const line = /\n {2}line: (.*)\n/.exec(text)![1]!;
      assert.ok(line.length <= 300, `${line.length} characters`);
      assert.match(line, /^…a+ ERROR disk full b{20}$/, "the match, with the cut start marked");
    });

    it("(?i)ſtatus wakes on a plain lowercase status line, as RE2 matches it", async () => {
      const { id, text } = await wakeOf("sleep 1; seq 1 2000; echo 'status ready'; sleep 300", "(?i)ſtatus");
      assert.match(text, new RegExp(`session ${id} printed a line matching /\\(\\?i\\)ſtatus/`));
      assert.match(text, /\n {2}line: status ready\n/);
    });

    it("(?i) with the Kelvin sign wakes on a plain upper-case KELVIN line, as RE2 matches it", async () => {
      const { text } = await wakeOf("sleep 1; seq 1 2000; echo 'KELVIN 300'; sleep 300", "(?i)\u212Aelvin");
      assert.match(text, /\n {2}line: KELVIN 300\n/);
    });
  });
}
