/**
 * What a job that seems to wait for input tells the model, through the real Pi CLI (RPC mode)
 * (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2`), on both hosts: a quiet line ending in `:` while the job only
 * sleeps is no prompt (no input wake, no `input_wait`, no hint), on pipes and a PTY; a prompt answered
 * after its wake (Python's `input()` on pipes by the model, `read -s` on a PTY, whose wake says it asks
 * for a secret, by the person through `ask_user`) wakes once, and not again while the program works on
 * silently; an input wake held during a run whose prompt timed out before the run settled never goes
 * out, while a prompt still waiting at the settle wakes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, isWake, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";

const SKIP = process.platform !== "linux" ? "the scan that tells a prompt from a quiet line reads /proc (Linux)" : SKIP_WITHOUT_PTY;
const wakeText = (record: PiEvent) => textOf(record.message.content);
const inputWakesIn = (text: string) =>
  [...text.matchAll(/session (\d+) (?:waits for input|asks for a secret: ask the person with `ask_user`)/g)].map((match) =>
    Number(match[1]),
  );
const exitsIn = (text: string) => [...text.matchAll(/^- session (\d+) · exit_code/gm)].map((match) => Number(match[1]));

for (const host of PI_HOSTS) {
  describe(`a job that seems to wait for input on ${host.name}`, { skip: SKIP }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION], env: { PI_UNIFIED_EXEC_INPUT_WAKE_S: "2" } });
    });
    after(async () => {
      await pi?.close();
    });
    const wakesSince = (from: number) => pi.records.slice(from).filter(isWake).map(wakeText);
    /** Waits until wakes since `from` have named the exits of `ids`. */
    const exitsWoken = async (from: number, ids: number[]) => {
      for (const id of ids) {
        await pi.waitForRecord((r) => isWake(r) && exitsIn(wakeText(r)).includes(id), from, 30_000, `session ${id}'s exit wake`);
      }
    };

    it("a quiet `Downloading weights (step 1 of 2): ` never wakes for input and a poll shows neither input_wait nor the hint (pipes, PTY)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const cmd = "printf 'Downloading weights (step 1 of 2): '; sleep 7";
      const run = await pi.run(
        "download",
        steps(
          callAll(
            ["exec_command", { cmd, on_exit: "wake", yield_time_ms: 250 }],
            ["exec_command", { cmd, tty: true, on_exit: "wake", yield_time_ms: 250 }],
          ),
          (view) =>
            callAll(
              ...view.last.map(
                (result) =>
                  ["write_stdin", { session_id: Number(headerOf(result.text).session_id), yield_time_ms: 5_000 }] as [
                    string,
                    Record<string, unknown>,
                  ],
              ),
            ),
          say("waiting"),
        ),
      );
      const ids = run.tools.slice(0, 2).map((tool) => Number(headerOf(tool.text).session_id));
      for (const poll of run.tools.slice(2)) {
        assert.equal(headerOf(poll.text).input_wait, undefined, poll.text);
        assert.doesNotMatch(poll.text, /polling will not move it|waits for input/, poll.text);
      }
      // The jobs end by themselves: their exits are the last thing they can wake for.
      await exitsWoken(from, ids);
      assert.deepEqual(wakesSince(from).flatMap(inputWakesIn), [], wakesSince(from).join("\n---\n"));
    });

    for (const [where, cmd, answer] of [
      ["Python's input() on pipes", `python3 -c 'input("Name: "); import time; time.sleep(5)'`, { chars: "bob\\n" }],
      ["read -s on a PTY (a secret: the person answers)", "read -s -p 'Password: ' x; sleep 5", { ask_user: "Type the password" }],
    ] as const) {
      it(`${where}, answered after its input wake, is no longer waiting and wakes no second time while it works on silently`, async () => {
        await pi.waitIdle();
        const from = pi.records.length;
        const answers: string[] = [];
        pi.setWakeScript(
          steps(
            (view) => {
              const [id] = inputWakesIn(view.prompt);
              return id === undefined ? say("noted") : call("write_stdin", { session_id: id, ...answer, yield_time_ms: 1_000 });
            },
            (view) => {
              answers.push(view.last[0]?.text ?? "");
              return say("answered");
            },
          ),
        );
        pi.onUiRequest((request) => (request.method === "input" ? { value: "s3cret" } : undefined));
        try {
          const tty = where.includes("PTY");
          const run = await pi.run("ask", steps(call("exec_command", { cmd, tty, on_exit: "wake", yield_time_ms: 250 }), say("started")));
          const id = Number(headerOf(run.tools[0]!.text).session_id);
          await exitsWoken(from, [id]);
          assert.equal(answers.length, 1, "the input wake was answered once");
          assert.equal(headerOf(answers[0]!).input_wait, undefined, answers[0]);
          assert.deepEqual(wakesSince(from).flatMap(inputWakesIn), [id], "one input wake, for the prompt");
          const secret = wakesSince(from).some((text) => text.includes(`session ${id} asks for a secret`));
          assert.equal(secret, "ask_user" in answer, "the wake of a hidden prompt says it asks for a secret");
        } finally {
          pi.onUiRequest(undefined);
          pi.setWakeScript(() => say("noted"));
        }
      });
    }

    it("an input wake held during a run whose prompt timed out before the settle never goes out; one still waiting does", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const timedOut = join(pi.dirs.root, `timed-out-${Date.now()}`);
      // The wake is due about 3 s after the prompt; the prompt times out at 8 s, printing more; the run
      // settles a second after that.
      const timingOut = `printf 'Continue? [y/N] '; read -t 8 x || echo 'no answer, going on'; touch ${timedOut}; sleep 60`;
      const waiting = "printf 'Name: '; read x; sleep 60";
      const run = await pi.run(
        "start both, keep working",
        steps(
          callAll(
            ["exec_command", { cmd: timingOut, on_exit: "wake", yield_time_ms: 250 }],
            ["exec_command", { cmd: waiting, on_exit: "wake", yield_time_ms: 250 }],
          ),
          call("exec_command", { cmd: `while [ ! -e ${timedOut} ]; do sleep 0.05; done; sleep 1`, yield_time_ms: 30_000 }),
          say("worked"),
        ),
      );
      const [timingOutId, waitingId] = inCallOrder(run)
        .slice(0, 2)
        .map((tool) => Number(headerOf(tool.text).session_id));
      await pi.waitForRecord((r) => isWake(r) && inputWakesIn(wakeText(r)).length > 0, from, 15_000, "the held input wake");
      await pi.settle();
      assert.deepEqual(wakesSince(from).flatMap(inputWakesIn), [waitingId]);
      await pi.run(
        "stop them",
        steps(
          callAll(
            ["kill_session", { session_id: timingOutId, signal: "SIGKILL" }],
            ["kill_session", { session_id: waitingId, signal: "SIGKILL" }],
          ),
        ),
      );
    });
  });
}
