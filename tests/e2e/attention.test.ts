/**
 * How loud a job may be (SPEC §3f), through the real Pi CLI (RPC mode) on both hosts, where Pi's run
 * events and delivery matter: a `next_turn` exit never starts a turn and reaches the model once, with
 * the next user prompt; one a poll made moot never arrives; `set_on_exit` moves a running job from
 * `wake` to `next_turn` and to `none`; the exit notice says what is unread and where the first
 * failure-looking line is; with a turn budget of 2 the third pattern wake waits for the next turn
 * with a count (the listing says so meanwhile) while a failed exit still wakes at once.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, type PiEvent, textOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { quietFor, waitFor } from "../helpers/processes.ts";
import { call, type ModelView, say, steps } from "../helpers/scripted-model.ts";

const noticeText = (record: PiEvent) => textOf(record.message.content);
const ridesWithTurn = (record: PiEvent) => record.message?.details?.next_turn === true;
/** A command that waits for `file` before going on (the test decides when a job prints or ends). */
const once = (file: string, then: string) => `while [ ! -e ${file} ]; do sleep 0.05; done; ${then}`;
/** Four batch windows and more: a notice due would have been handed to Pi by then. */
const SETTLE_MS = 1_500;

for (const host of PI_HOSTS) {
  describe(`attention levels on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { env: { PI_UNIFIED_EXEC_WAKE_TURNS: "2", PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S: "1" } });
    });
    after(async () => {
      await pi?.close();
    });
    const file = (name: string) => join(pi.dirs.root, `${name}-${Date.now()}`);
    const noticesSince = (from: number) => pi.records.slice(from).filter(isWake);
    const turnsSince = (from: number) => pi.records.slice(from).filter((record) => record.type === "agent_start").length;
    /** Runs a user prompt whose model only notes what rode with it; the riders. */
    const nextPrompt = async (prompt: string): Promise<string[]> => {
      let riders: string[] = [];
      await pi.run(prompt, (view: ModelView) => {
        riders = view.riders;
        return say("noted");
      });
      return riders;
    };

    it("a next_turn exit never starts a turn and reaches the model exactly once, with the next user prompt, saying what is unread", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const go = file("go");
      const run = await pi.run(
        "start a job to hear of later",
        steps(
          call("exec_command", {
            cmd: once(go, "for i in $(seq 1 5000); do if [ $i = 1200 ]; then echo 'ERROR: disk full'; else echo line $i; fi; done; exit 1"),
            on_exit: "next_turn",
            yield_time_ms: 250,
          }),
          say("started"),
        ),
      );
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      assert.match(headerOf(run.tools[0]!.text).completion_notification!, /^next_turn \(.*it never starts one\)$/);
      const turns = turnsSince(from);
      writeFileSync(go, "");
      await quietFor(SETTLE_MS * 2);
      assert.equal(turnsSince(from), turns, "no turn started");
      assert.deepEqual(noticesSince(from), []);
      const riders = await nextPrompt("what now?");
      assert.equal(riders.length, 1);
      assert.match(riders[0]!, new RegExp(`session ${id} · exit_code 1`));
      assert.match(
        riders[0]!,
        /unread: 5000 lines, [\d.]+ KB \(log lines 1–5000\); first failure-looking line: log line 1200 \(1 in all\)/,
      );
      assert.doesNotMatch(riders[0]!, /disk full/, "never a byte of output");
      assert.equal(noticesSince(from).filter(ridesWithTurn).length, 1);
      assert.deepEqual(await nextPrompt("and now?"), [], "exactly once");
    });

    it("a next_turn exit the model polls in the run it ends in is never delivered", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const ended = file("ended");
      await pi.run(
        "start, keep working, poll",
        steps(
          call("exec_command", { cmd: `sleep 0.5; echo done; touch ${ended}; exit 4`, on_exit: "next_turn", yield_time_ms: 250 }),
          call("exec_command", { cmd: once(ended, "sleep 1"), yield_time_ms: 30_000 }),
          (view) => call("write_stdin", { session_id: view.results[0]!.details.session_id }),
          say("polled"),
        ),
      );
      assert.deepEqual(await nextPrompt("anything else?"), []);
      assert.deepEqual(noticesSince(from), []);
    });

    it("set_on_exit moves a running job from wake to next_turn, and another to none", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const go = file("go");
      const run = await pi.run(
        "start two, then quiet them",
        steps(
          call("exec_command", { cmd: once(go, "exit 0"), on_exit: "wake", yield_time_ms: 250 }),
          call("exec_command", { cmd: once(go, "exit 0"), on_exit: "wake", yield_time_ms: 250 }),
          (view) => call("set_on_exit", { session_id: view.results[0]!.details.session_id, on_exit: "next_turn" }),
          (view) => call("set_on_exit", { session_id: view.results[1]!.details.session_id, on_exit: "none" }),
          say("quieted"),
        ),
      );
      const [quieter, silenced] = [0, 1].map((i) => Number(headerOf(run.tools[i]!.text).session_id));
      assert.match(run.tools[2]!.text, /status: armed\n.*told in your next turn/);
      assert.match(run.tools[3]!.text, /status: disarmed/);
      const turns = turnsSince(from);
      writeFileSync(go, "");
      await quietFor(SETTLE_MS * 2);
      assert.equal(turnsSince(from), turns, "neither exit started a turn");
      const riders = await nextPrompt("status?");
      assert.equal(riders.length, 1);
      assert.match(riders[0]!, new RegExp(`session ${quieter} · exit_code 0`));
      assert.doesNotMatch(riders[0]!, new RegExp(`session ${silenced} `));
    });

    it("with a budget of 2 turns, the third pattern wake waits for the next turn with a count while a failed exit still wakes at once", async () => {
      await pi.waitIdle();
      const go = [1, 2, 3, 4].map((n) => file(`go${n}`));
      const printed = file("printed3");
      const run = await pi.run(
        "start four",
        steps(
          call("exec_command", { cmd: once(go[0]!, "echo 'ERROR one'; sleep 300"), wake_on_pattern: "ERROR", yield_time_ms: 250 }),
          call("exec_command", { cmd: once(go[1]!, "echo 'ERROR two'; sleep 300"), wake_on_pattern: "ERROR", yield_time_ms: 250 }),
          call("exec_command", {
            cmd: once(go[2]!, `echo 'ERROR three'; touch ${printed}; sleep 300`),
            wake_on_pattern: "ERROR",
            yield_time_ms: 250,
          }),
          call("exec_command", { cmd: once(go[3]!, "exit 1"), on_exit: "wake", yield_time_ms: 250 }),
          say("started"),
        ),
      );
      const ids = [0, 1, 2, 3].map((i) => Number(headerOf(run.tools[i]!.text).session_id));
      // The first two matches each start a turn (the earlier tests started none).
      for (const n of [0, 1]) {
        const before = pi.records.length;
        writeFileSync(go[n]!, "");
        const wake = await pi.waitForRecord(isWake, before, 15_000, `pattern wake ${n + 1}`);
        assert.match(noticeText(wake), new RegExp(`session ${ids[n]} printed a line`));
        await pi.waitIdle();
      }
      // The third comes during a run: the listing in it says the budget will hold it.
      writeFileSync(go[2]!, "");
      const listed = await pi.run(
        "keep working",
        steps(call("exec_command", { cmd: once(printed, "sleep 1"), yield_time_ms: 30_000 }), call("list_sessions", {}), say("listed")),
      );
      assert.match(listed.tools[1]!.text, /notices_held: 1 \(to save turns: 2 per 10 min; they come with your next turn\)/);
      const heldFrom = pi.records.length;
      await quietFor(SETTLE_MS * 2);
      assert.deepEqual(noticesSince(heldFrom), [], "held: no turn of its own");
      const riders = await nextPrompt("next");
      assert.equal(riders.length, 1);
      assert.match(riders[0]!, new RegExp(`session ${ids[2]} printed a line matching /ERROR/`));
      assert.match(riders[0]!, /1 of these waited to save turns/);
      // The budget is spent, and a failed exit still wakes at once.
      await pi.waitIdle();
      const exitFrom = pi.records.length;
      writeFileSync(go[3]!, "");
      const wake = await pi.waitForRecord(isWake, exitFrom, 15_000, "the failed exit's wake");
      assert.equal(ridesWithTurn(wake), false);
      assert.match(noticeText(wake), new RegExp(`session ${ids[3]} · exit_code 1`));
      await pi.waitIdle();
      await waitFor(() => existsSync(printed), "job 3 printed");
      await pi.run("stop them", steps(...ids.slice(0, 3).map((id) => call("kill_session", { session_id: id, signal: "SIGKILL" }))));
    });
  });
}
