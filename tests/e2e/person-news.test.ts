/**
 * What a person does to a job, as the model learns it, through the real Pi CLI (RPC mode) on every
 * host: a token typed for `ask_user` and printed by the job two seconds later wakes the model without
 * the line, and no record holds it; `ask_user` with `chars: ""` asks; the `input` dialog ends with its
 * job (exit, deadline kill) and the call returns the exit with `user_input: 0 bytes`; the person's
 * typing and disarms from the sessions picker are told once, in the model's next result of any tool
 * on the job (a poll, `list_sessions`, `kill_session`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { headerOf, inCallOrder, isWake, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { type PiRpcHost, piForSuite } from "../helpers/pi-rpc.ts";
import { call, firstSession, say, steps } from "../helpers/scripted-model.ts";
import { filesUnder } from "../helpers/secrets.ts";

const TOKEN = "tok-4e1d8a-credential";
/** The job: a silent read, then two seconds later a line that carries what was typed. */
const TOKEN_JOB = `read -s -p 'Token: ' t; echo; sleep 2; echo "stored credential $t"; sleep 300`;
const wakeText = (record: PiEvent) => textOf(record.message.content);

for (const host of PI_HOSTS) {
  describe(`a person's part in a job, told to the model, on ${host.name}`, () => {
    let pi: PiRpcHost;
    piForSuite(host, { extensions: [EXTENSION_ENTRY] }, (started) => {
      pi = started;
    });
    const stop = async (id: number) => {
      pi.onUiRequest(undefined);
      await pi.waitIdle();
      await pi.run("stop it", steps(call("kill_session", { session_id: id, signal: "SIGKILL" }), say("stopped")));
    };
    /** Picks `id` in the sessions picker, then the action whose label starts with `action`; answers its input with `line`. */
    const picker = (id: number, action: string, line?: string) =>
      pi.onUiRequest((request) => {
        if (request.method === "select" && request.title === "unified-exec sessions")
          return { value: request.options.find((option: string) => option.startsWith(`${id} ·`)) };
        if (request.method === "select") return { value: request.options.find((option: string) => option.startsWith(action)) };
        if (request.method === "input" && line !== undefined) return { value: line };
        return undefined;
      });

    it('a token typed for ask_user (chars: "" beside it) and printed 2 s later wakes the model without the line; no record holds it', async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      pi.onUiRequest((request) => (request.method === "input" ? { value: TOKEN } : undefined));
      const run = await pi.run(
        "store the token",
        steps(
          call("exec_command", {
            cmd: TOKEN_JOB,
            tty: true,
            until_pattern: "Token: ",
            yield_time_ms: 5_000,
            wake_on_pattern: "stored credential",
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "", ask_user: "Paste the API token" }),
          say("asked"),
        ),
      );
      const [started, asked] = inCallOrder(run);
      const id = Number(headerOf(started!.text).session_id);
      assert.equal(asked!.isError, false, 'chars: "" is the default, not input of the model\'s own');
      assert.equal(headerOf(asked!.text).user_input, `${TOKEN.length + 1} bytes`);
      const wake = await pi.waitForRecord(isWake, from, 20_000, "the pattern wake");
      const text = wakeText(wake);
      assert.match(text, new RegExp(`session ${id} printed a line matching /stored credential/`));
      assert.match(text, /line: not quoted: a person typed into this job; write_stdin reads it/);
      await pi.waitIdle();
      assert.doesNotMatch(JSON.stringify(pi.records.slice(from)), new RegExp(TOKEN), "no wake, result, details or event holds it");
      const inLogs = filesUnder(pi.dirs.logs).join("\n").match(new RegExp(TOKEN, "g")) ?? [];
      assert.equal(inLogs.length, 1, "the log holds the job's own output line, never the typing");
      await stop(id);
    });

    for (const how of ["exits", "is stopped at its deadline"] as const) {
      it(`the input dialog ends when the job ${how}: the call returns the exit with user_input: 0 bytes`, async () => {
        await pi.waitIdle();
        const from = pi.records.length;
        pi.onUiRequest((request) => (request.method === "input" ? new Promise(() => {}) : undefined)); // never answered
        const cmd = how === "exits" ? "sleep 1.5; echo bye; exit 4" : "sleep 300";
        const run = await pi.run(
          "ask and wait",
          steps(
            call("exec_command", { cmd, tty: how !== "exits", yield_time_ms: 250, ...(how === "exits" ? {} : { timeout_s: 2 }) }),
            (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "Your answer, please" }),
            say("returned"),
          ),
          30_000,
        );
        const [, asked] = inCallOrder(run);
        const header = headerOf(asked!.text);
        assert.equal(header.user_input, "0 bytes");
        if (how === "exits") assert.equal(header.exit_code, "4");
        else assert.equal(header.killed_by, "deadline");
        const notes = pi.records.slice(from).filter((r) => r.type === "extension_ui_request" && r.method === "notify");
        assert.ok(
          notes.some((note) => /ended; the dialog "Your answer, please" is closed and nothing was sent/.test(note.message)),
          "the client is told its dialog no longer counts",
        );
      });
    }

    it("typing from the picker is told once, by the next result of any tool: list_sessions, then not by kill_session", async () => {
      await pi.waitIdle();
      const started = await pi.run("start", steps(call("exec_command", { cmd: "cat > /dev/null", yield_time_ms: 250 }), say("started")));
      const id = Number(headerOf(started.tools[0]!.text).session_id);
      picker(id, "Type into it", "abc");
      await pi.run("/unified-exec-sessions", steps());
      pi.onUiRequest(undefined);
      const run = await pi.run("look", steps(call("list_sessions", {}), call("kill_session", { session_id: id }), say("done")));
      const [listed, killed] = inCallOrder(run);
      assert.match(listed!.text, /\n {2}user_input: 4 bytes(\n|$)/);
      assert.doesNotMatch(killed!.text, /user_input/, "told once");
    });

    it("typing from the picker is told by kill_session when that is the next call", async () => {
      await pi.waitIdle();
      const started = await pi.run("start", steps(call("exec_command", { cmd: "cat > /dev/null", yield_time_ms: 250 }), say("started")));
      const id = Number(headerOf(started.tools[0]!.text).session_id);
      picker(id, "Type into it", "hello");
      await pi.run("/unified-exec-sessions", steps());
      pi.onUiRequest(undefined);
      const run = await pi.run("stop", steps(call("kill_session", { session_id: id }), say("done")));
      assert.equal(headerOf(inCallOrder(run)[0]!.text).user_input, "6 bytes");
    });

    it("a disarm from the picker is told once by the model's next result on the job (list_sessions, then not kill_session)", async () => {
      await pi.waitIdle();
      const started = await pi.run(
        "start",
        steps(call("exec_command", { cmd: "sleep 300", on_exit: "wake", yield_time_ms: 250 }), say("started")),
      );
      const id = Number(headerOf(started.tools[0]!.text).session_id);
      picker(id, "Disarm its wake");
      await pi.run("/unified-exec-sessions", steps());
      pi.onUiRequest(undefined);
      const run = await pi.run("look", steps(call("list_sessions", {}), call("kill_session", { session_id: id }), say("done")));
      const [listed, killed] = inCallOrder(run);
      assert.match(listed!.text, /\n {2}exit_wake: none\n/);
      assert.match(listed!.text, /\n {2}user_disarmed: exit_wake(\n|$)/);
      assert.doesNotMatch(killed!.text, /user_disarmed/, "once");
    });
  });
}
