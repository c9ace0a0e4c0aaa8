/**
 * The user types into a job, through the real Pi CLI on every host: `ask_user` answered through RPC's
 * `input` dialog (titled with the model's words) on a PTY and a pipe job, a cancelled dialog, the
 * model's write refused while the user holds the job, "Type into it" from the sessions picker, and a
 * print/JSON run's refusal. What the user typed appears nowhere the model or the disk can see.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf, type PiEvent } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { type PiRpcHost, piForSuite } from "../helpers/pi-rpc.ts";
import { call, callAll, firstSession, say, steps } from "../helpers/scripted-model.ts";
import { filesUnder, PASSPHRASE_PROMPT } from "../helpers/secrets.ts";

const SECRET = "s3cret-Passphrase!";

for (const host of PI_HOSTS) {
  describe(`the user types into a job, over RPC, on ${host.name}`, () => {
    let pi: PiRpcHost;
    piForSuite(host, { extensions: [EXTENSION_ENTRY] }, (started) => {
      pi = started;
    });
    const inputs = (from: number) => pi.records.slice(from).filter((r) => r.type === "extension_ui_request" && r.method === "input");

    it("ask_user: the input dialog carries the model's words, the answer reaches the PTY job, and the model sees only a count", async () => {
      const from = pi.records.length;
      pi.onUiRequest((request) => (request.method === "input" ? { value: SECRET } : undefined));
      const run = await pi.run(
        "unlock the key",
        steps(
          call("exec_command", { cmd: PASSPHRASE_PROMPT, tty: true, until_pattern: "Passphrase: ", yield_time_ms: 5_000 }),
          (view) =>
            call("write_stdin", {
              session_id: firstSession(view),
              ask_user: "Type the passphrase for \u001b[31mdeploy\u001b[0m",
              until_pattern: "^len=",
              yield_time_ms: 5_000,
            }),
          say("unlocked"),
        ),
      );
      const [, asked] = inCallOrder(run);
      const dialog = inputs(from)[0]!;
      assert.equal(dialog.title, "Type the passphrase for \\e[31mdeploy\\e[0m", "one visible line, escapes shown");
      assert.equal(headerOf(asked!.text).user_input, `${SECRET.length + 1} bytes`);
      assert.match(outputOf(asked!.text), new RegExp(`len=${SECRET.length} sum=`));
      assert.equal(asked!.structuredContent.user_input, `${SECRET.length + 1} bytes`);
      const everything = JSON.stringify(pi.records.slice(from)) + filesUnder(pi.dirs.logs).join("\n");
      assert.doesNotMatch(everything, /s3cret/, "no record, result, details or log holds it");
    });

    it("ask_user on a pipe job sends the line with \\n; a cancelled dialog writes nothing", async () => {
      let answer: Record<string, unknown> | undefined = { value: "abc" };
      pi.onUiRequest((request) => (request.method === "input" ? answer : undefined));
      const run = await pi.run(
        "ask twice",
        steps(
          call("exec_command", {
            cmd: 'read -r line; echo "got $(printf %s "$line" | wc -c)"; read -r again; echo "again $(printf %s "$again" | wc -c)"; sleep 300',
            yield_time_ms: 250,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "Your name?", until_pattern: "^got" }),
          (view) => {
            answer = undefined; // the next dialog is cancelled
            return call("write_stdin", { session_id: firstSession(view), ask_user: "Again?", yield_time_ms: 500 });
          },
          say("done"),
        ),
      );
      const [, named, cancelled] = inCallOrder(run);
      assert.match(outputOf(named!.text), /^got 3$/m);
      assert.equal(headerOf(named!.text).user_input, "4 bytes");
      assert.equal(headerOf(cancelled!.text).user_input, "0 bytes (cancelled)");
      assert.doesNotMatch(outputOf(cancelled!.text), /again/, "nothing was written");
    });

    it("while the user holds the job, the model's write in the same message is refused and nothing is written", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      pi.onUiRequest((request) => (request.method === "input" ? held.then(() => ({ value: "user-line" })) : undefined));
      const from = pi.records.length;
      const started = await pi.run("start", steps(call("exec_command", { cmd: "cat", tty: true, yield_time_ms: 250 }), say("started")));
      const id = Number(headerOf(started.tools[0]!.text).session_id);
      const running = pi.run(
        "both at once",
        steps(
          callAll(
            ["write_stdin", { session_id: id, ask_user: "Type a line", until_pattern: "user-line", yield_time_ms: 3_000 }],
            ["write_stdin", { session_id: id, chars: "model-line\r" }],
          ),
          call("list_sessions", {}),
          say("done"),
        ),
      );
      await pi.waitForRecord((r: PiEvent) => r.type === "tool_execution_end" && r.isError === true, from, 15_000, "the refused write");
      release();
      const run = await running;
      const [asked, refused, listed] = inCallOrder(run);
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, new RegExp(`the user is typing into session ${id}|is busy`));
      assert.match(outputOf(asked!.text), /user-line/);
      assert.doesNotMatch(outputOf(asked!.text), /model-line/);
      assert.match(listed!.text, /session_id/);
      await pi.run("stop", steps(call("kill_session", { session_id: id })));
    });

    it('"Type into it" from the sessions picker: a line to a Python REPL, and the model\'s next poll sees 42 and the count', async () => {
      const started = await pi.run(
        "start python",
        steps(call("exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $", yield_time_ms: 10_000 }), say("started")),
      );
      const id = Number(headerOf(started.tools[0]!.text).session_id);
      const from = pi.records.length;
      pi.onUiRequest((request) => {
        if (request.method === "select" && request.title === "unified-exec sessions")
          return { value: request.options.find((option: string) => option.startsWith(`${id} ·`)) };
        if (request.method === "select") return { value: request.options.find((option: string) => option.startsWith("Type into it")) };
        if (request.method === "input") return { value: "print(6*7)" };
        return undefined;
      });
      await pi.run("/unified-exec-sessions", steps());
      const told = pi.records.slice(from).find((r) => r.type === "extension_ui_request" && r.method === "notify");
      assert.match(told?.message ?? "", new RegExp(`you typed 11 bytes into session ${id}`));
      pi.onUiRequest(undefined);
      const poll = await pi.run(
        "poll",
        steps(call("write_stdin", { session_id: id, until_pattern: "^42$", yield_time_ms: 5_000 }), say("42")),
      );
      assert.match(outputOf(poll.tools[0]!.text), /^42$/m);
      assert.equal(headerOf(poll.tools[0]!.text).user_input, "11 bytes");
      await pi.run("stop", steps(call("kill_session", { session_id: id })));
    });
  });

  describe(`ask_user in a JSON run on ${host.name}`, () => {
    it("is refused before anything is asked or written; the job is untouched", async () => {
      const run = await runJson(
        host,
        "ask in print mode",
        steps(
          call("exec_command", { cmd: 'read -r line; echo "got $(printf %s "$line" | wc -c)"', yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "Your name?" }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "x\n", until_pattern: "got" }),
          say("done"),
        ),
      );
      const [, refused, written] = inCallOrder(run);
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /ask_user needs Pi's interactive terminal or an RPC client/);
      assert.match(outputOf(written!.text), /^got 1$/m, "the job still waited for its line");
    });
  });
}
