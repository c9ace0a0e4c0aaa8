/**
 * Defaults that work without a rule, through the real Pi CLI on the newest host: the README's
 * installer example and the REPL guideline's `until_pattern: "^>>> $"` work as written (a write
 * with a condition and no yield_time_ms waits up to 30 s), a clamped window and the bytes sent are
 * said in the text, and a just-in-time line appears in the result that needs it, once: a pipe job
 * that waits with no prompt (bash's `read -p`). The other lines (a second plain poll in a row, …) are
 * `tests/unit/pi/hints.test.ts`'s: their Pi path is this one.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, firstSession, steps } from "../helpers/scripted-model.ts";

/** An installer that asks, then takes a while to finish and stays running (as one that starts a service would). */
const INSTALLER =
  "printf 'Overwrite existing config? [y/N] '; read answer; sleep 1; echo \"keeping your config ($answer)\"; sleep 0.5; echo installed; sleep 60";

const TTY_LINE = /a program may print its prompt only to a terminal: run it with tty: true/;

for (const host of NEWEST_HOST_ONLY) {
  describe(`defaults that need no rule on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it('the README installer example: write_stdin {"chars": "n\\n", "until_quiet_ms": 2000} waits for the answer\'s output', async () => {
      const run = await pi.run(
        "run the installer",
        steps(
          call("exec_command", { cmd: INSTALLER, until_pattern: "\\[y/N\\] $" }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "n\n", until_quiet_ms: 2000 }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const [asked, answered] = inCallOrder(run);
      assert.equal(headerOf(asked!.text).wait_status, "matched", asked!.text);
      const header = headerOf(answered!.text);
      assert.equal(header.wait_status, "quiet", answered!.text);
      assert.equal(header.input, "2 bytes sent");
      assert.equal(outputOf(answered!.text), "keeping your config (n)\ninstalled\n");
      assert.equal(answered!.details.yield_time_ms, 30_000, "the window a condition gets when none is given");
      assert.doesNotMatch(answered!.text, /yield_time_ms:/, "a default is not a clamp");
    });

    it(
      'the REPL guideline: a line sent with until_pattern "^>>> $" returns at the next prompt with its answer',
      { skip: SKIP_WITHOUT_PTY },
      async () => {
        const run = await pi.run(
          "python",
          steps(
            call("exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $" }),
            (view) =>
              call("write_stdin", {
                session_id: firstSession(view),
                chars: "import time; time.sleep(1); print(6*7)\r",
                until_pattern: "^>>> $",
              }),
            (view) => call("kill_session", { session_id: firstSession(view) }),
          ),
        );
        const [started, answered] = inCallOrder(run);
        assert.equal(headerOf(started!.text).wait_status, "matched", started!.text);
        assert.equal(headerOf(answered!.text).wait_status, "matched", answered!.text);
        assert.match(outputOf(answered!.text), /\n42\n>>> $/);
        assert.ok(answered!.durationMs! >= 900, `returned after ${answered!.durationMs} ms, at the prompt, not at 250 ms`);
      },
    );

    it("a window clamped from what was asked says so in the text, beside the bytes sent", async () => {
      const run = await pi.run(
        "clamp",
        steps(call("exec_command", { cmd: 'read a; echo "got $a"', yield_time_ms: 500 }), (view) =>
          call("write_stdin", { session_id: firstSession(view), chars: "hello\n", yield_time_ms: 45_000 }),
        ),
      );
      const [, answered] = inCallOrder(run);
      const header = headerOf(answered!.text);
      assert.equal(header.yield_time_ms, "45000 → 30000", answered!.text);
      assert.equal(header.input, "6 bytes sent");
      assert.equal(header.exit_code, "0");
    });

    it(
      "a pipe job that waits for input with no prompt shown (read -p) is told once to run it with tty: true",
      { skip: process.platform === "linux" ? false : "input_wait without a prompt needs Linux's /proc" },
      async () => {
        let id = 0;
        const run = await pi.run(
          "read -p",
          steps(
            call("exec_command", { cmd: 'read -p "Continue? " answer; echo "got $answer"', yield_time_ms: 2_000 }),
            (view) => {
              id = firstSession(view);
              return call("write_stdin", { session_id: id, yield_time_ms: 5_000 });
            },
            () => call("write_stdin", { session_id: id, chars: "y\n", yield_time_ms: 5_000 }),
          ),
        );
        const calls = inCallOrder(run);
        const told = calls.filter((tool) => TTY_LINE.test(tool.text));
        assert.equal(told.length, 1, calls.map((tool) => tool.text).join("\n====\n"));
        assert.equal(headerOf(told[0]!.text).input_wait, "likely");
        assert.match(headerOf(told[0]!.text).hint ?? "", /the job waits for input: answer with chars/);
        assert.equal(outputOf(calls.at(-1)!.text), "got y\n");
        assert.doesNotMatch(calls.at(-1)!.text, /hint:/);
      },
    );
  });
}
