/**
 * A prompt that hides what is typed is the person's, through the real Pi CLI (RPC mode) on every
 * host: `read -s -p 'Password: '` on a PTY is `input_wait: secret` in a result and the listing; the
 * model's `hunter2\n` is refused and the job never gets a byte of it, while `ask_user` answered by the
 * client goes through (and is nowhere a record or the log can show), as does the person's answer
 * from the picker, whose menu says the job asks for a secret; `read -p 'Name: '` still takes
 * the model's text; with the person's `PI_UNIFIED_EXEC_MODEL_SECRETS=allow` the model's write goes through.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { type PiRpcHost, piForSuite } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, firstSession, say, steps } from "../helpers/scripted-model.ts";
import { filesUnder, PASSPHRASE_PROMPT } from "../helpers/secrets.ts";

const SKIP = process.platform !== "linux" ? "the echo flag is read on Linux only" : SKIP_WITHOUT_PTY;
const PASSPHRASE = "s3cret-Passphrase!";
const sum = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);
const started = (cmd: string, prompt: string) => call("exec_command", { cmd, tty: true, until_pattern: prompt, yield_time_ms: 10_000 });

for (const host of PI_HOSTS) {
  describe(`a prompt that hides what is typed, on ${host.name}`, { skip: SKIP }, () => {
    let pi: PiRpcHost;
    piForSuite(host, { extensions: [EXTENSION_ENTRY] }, (launched) => {
      pi = launched;
    });

    it("read -s is input_wait: secret; the model's hunter2 is refused unwritten; ask_user answered by the client goes through", async () => {
      const from = pi.records.length;
      pi.onUiRequest((request) => (request.method === "input" ? { value: PASSPHRASE } : undefined));
      const run = await pi.run(
        "unlock the key",
        steps(
          started(PASSPHRASE_PROMPT, "Passphrase: "),
          // Ctrl-U goes through (a control key) and its result shows the wait.
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x15", yield_time_ms: 1_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "hunter2\\n" }),
          call("list_sessions", {}),
          (view) =>
            call("write_stdin", {
              session_id: firstSession(view),
              ask_user: "Type the passphrase for the deploy key",
              until_pattern: "^len=",
              yield_time_ms: 10_000,
            }),
          say("unlocked"),
        ),
      );
      const [first, cleared, refused, listed, asked] = inCallOrder(run);
      const id = Number(headerOf(first!.text).session_id);
      assert.equal(headerOf(cleared!.text).input_wait, "secret", cleared!.text);
      const hinted = [first!, cleared!].filter((result) =>
        /hint: .*asks for a secret: ask the person with write_stdin ask_user/.test(result.text),
      );
      assert.equal(hinted.length, 1, "the hint, once");
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, new RegExp(`session ${id} asks for a secret`));
      assert.match(refused!.text, /ask_user/);
      assert.doesNotMatch(refused!.text, /hunter2/);
      assert.match(listed!.text, /input_wait: secret/);
      assert.match(outputOf(asked!.text), new RegExp(`len=${PASSPHRASE.length} sum=${sum(PASSPHRASE)}`), "exactly the person's bytes");
      assert.equal(headerOf(asked!.text).user_input, `${PASSPHRASE.length + 1} bytes`);
      const everything = JSON.stringify(pi.records.slice(from)) + filesUnder(pi.dirs.logs).join("\n");
      assert.doesNotMatch(everything, /s3cret/, "no record, result, details or log holds what the person typed");
      await pi.run("stop", steps(call("kill_session", { session_id: id, signal: "SIGKILL" }), say("stopped")));
    });

    it("the picker's menu says the job asks for a secret, and the person's answer typed there reaches it", async () => {
      const run = await pi.run("start", steps(started(PASSPHRASE_PROMPT, "Passphrase: "), say("started")));
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      let offered: string[] = [];
      pi.onUiRequest((request) => {
        if (request.method === "select" && request.title === "unified-exec sessions")
          return { value: request.options.find((option: string) => option.startsWith(`${id} ·`)) };
        if (request.method === "select") {
          offered = request.options;
          return { value: request.options.find((option: string) => option.startsWith("Type into it")) };
        }
        if (request.method === "input") return { value: PASSPHRASE };
        return undefined;
      });
      await pi.run("/unified-exec-sessions", steps());
      pi.onUiRequest(undefined);
      assert.ok(
        offered.some((option) => option.startsWith("Type into it: it asks for a secret")),
        offered.join(" | "),
      );
      const poll = await pi.run(
        "poll",
        steps(call("write_stdin", { session_id: id, until_pattern: "^len=", yield_time_ms: 5_000 }), say("read")),
      );
      assert.match(outputOf(poll.tools[0]!.text), new RegExp(`len=${PASSPHRASE.length} sum=${sum(PASSPHRASE)}`));
      await pi.run("stop", steps(call("kill_session", { session_id: id, signal: "SIGKILL" }), say("stopped")));
    });

    it("read -p 'Name: ' still takes the model's text", async () => {
      const run = await pi.run(
        "name it",
        steps(
          started(`read -p 'Name: ' x; echo "len=\${#x}"`, "Name: "),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "bob\\n", until_pattern: "^len=", yield_time_ms: 5_000 }),
          say("named"),
        ),
      );
      const [, named] = inCallOrder(run);
      assert.equal(named!.isError, false);
      assert.match(outputOf(named!.text), /^len=3$/m);
    });
  });

  describe(`a prompt that hides what is typed, with PI_UNIFIED_EXEC_MODEL_SECRETS=allow, on ${host.name}`, { skip: SKIP }, () => {
    let pi: PiRpcHost;
    piForSuite(host, { extensions: [EXTENSION_ENTRY], env: { PI_UNIFIED_EXEC_MODEL_SECRETS: "allow" } }, (launched) => {
      pi = launched;
    });

    it("the model's hunter2 goes through: the person allowed it", async () => {
      const run = await pi.run(
        "unlock the key",
        steps(
          started(PASSPHRASE_PROMPT, "Passphrase: "),
          (view) =>
            call("write_stdin", { session_id: firstSession(view), chars: "hunter2\\n", until_pattern: "^len=", yield_time_ms: 5_000 }),
          say("unlocked"),
        ),
      );
      const [, typed] = inCallOrder(run);
      assert.equal(typed!.isError, false, typed!.text);
      assert.match(outputOf(typed!.text), new RegExp(`len=7 sum=${sum("hunter2")}`));
    });
  });
}
