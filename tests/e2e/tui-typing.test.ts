/**
 * The user types into a job in Pi's real TUI (tmux, both hosts): a `read -s` passphrase answered
 * through `ask_user` in the overlay, a Python REPL taken over from the sessions picker, Ctrl+C and
 * arrow keys reaching a raw-mode program, the overlay closing when the job exits or is stopped at its
 * deadline, and a pipe job's one-line input closing when the job exits. What was typed
 * reaches the job and nothing else: not the model, the screen's history, or the log.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { headerOf, outputOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { waitFor } from "../helpers/processes.ts";
import { call, firstSession, type ModelView, say, steps } from "../helpers/scripted-model.ts";
import { filesUnder, PASSPHRASE_PROMPT } from "../helpers/secrets.ts";
import { TmuxPi } from "../helpers/tmux.ts";

const SECRET = "tmux-S3cret-phrase";
const OVERLAY = /session (\d+) · you are typing into the job · Ctrl\+\] returns to Pi/;

for (const host of PI_HOSTS) {
  describe(`typing into a job in the TUI on ${host.name}`, () => {
    let tui: TmuxPi;
    before(async () => {
      tui = await TmuxPi.start(host);
    });
    after(async () => {
      await tui?.close();
    });
    /** Results the model was given, in order. */
    const results: string[] = [];
    const recording = (script: (view: ModelView) => ReturnType<ReturnType<typeof steps>>) => (view: ModelView) => {
      results.push(...view.last.map((result) => result.text));
      return script(view);
    };

    it("ask_user on a read -s prompt: the overlay, the job reads exactly the passphrase, the model sees only a count", async () => {
      results.length = 0;
      tui.model.script = recording(
        steps(
          call("exec_command", { cmd: PASSPHRASE_PROMPT, tty: true, until_pattern: "Passphrase: ", yield_time_ms: 5_000 }),
          (view) =>
            call("write_stdin", {
              session_id: firstSession(view),
              ask_user: "Type the passphrase for the deploy key",
              until_pattern: "^len=",
              yield_time_ms: 5_000,
            }),
          say("the key is unlocked"),
        ),
      );
      tui.type("unlock the deploy key");
      const overlay = await tui.waitForScreen(OVERLAY, "the overlay");
      assert.match(overlay, /Type the passphrase for the deploy key/);
      assert.match(overlay, /Passphrase:/);
      tui.type(SECRET, false);
      tui.key("Enter");
      await tui.waitForScreen(/len=18 sum=/, "the job's answer on the overlay");
      tui.key("C-]");
      await tui.waitForScreen(/the key is unlocked/, "the model's answer");
      const asked = results.find((text) => /user_input/.test(text))!;
      assert.equal(headerOf(asked).user_input, "19 bytes");
      assert.match(outputOf(asked), /len=18 sum=/);
      assert.match(tui.screen(), /» you typed 19 bytes/);
      const seen = [...results, tui.screenWithAttributes(), ...filesUnder(tui.dirs.logs)].join("\n");
      assert.doesNotMatch(seen, /S3cret/, "the model's results, the terminal's history and the logs never hold it");
      tui.model.script = steps(
        call("kill_session", { session_id: Number(/session (\d+)/.exec(overlay)?.[1]) }),
        say("the deploy job is gone"),
      );
      tui.type("stop it");
      // The model's reply, not the kill's row ("stopped session 1"): the next test's script must not answer this run.
      await tui.waitForScreen(/the deploy job is gone/, "the kill");
    });

    it("a Python REPL taken over from the picker: print(6*7), and the model's next poll sees 42 and the count", async () => {
      results.length = 0;
      tui.model.script = recording(
        steps(call("exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $", yield_time_ms: 10_000 }), say("python is up")),
      );
      tui.type("start python");
      await tui.waitForScreen(/python is up/, "the REPL");
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/\d+ · running \S+ · python3 -q/, "the picker");
      tui.key("Enter");
      await tui.waitForScreen(/Type into it/, "the actions");
      tui.key("Down");
      tui.key("Enter");
      const overlay = await tui.waitForScreen(OVERLAY, "the overlay");
      const id = Number(OVERLAY.exec(overlay)?.[1]);
      // The overlay takes keys once it draws the job's screen: the prompt under its title.
      await tui.waitForScreen(/you are typing into the job[\s\S]*^>>> ?$/m, "the REPL's prompt on the overlay");
      tui.type("print(6*7)");
      await tui.waitForScreen(/^42\s*$/m, "42 on the overlay");
      tui.key("C-]");
      await tui.waitForScreen(new RegExp(`» you typed 11 bytes into session ${id}`), "the count, for the person");
      // Waits for the line the assertion needs rather than a fixed window: a busy machine may deliver it late.
      tui.model.script = recording(
        steps(call("write_stdin", { session_id: id, until_pattern: "^42$", yield_time_ms: 15_000 }), say("read it")),
      );
      tui.type("what did I type?");
      await tui.waitForScreen(/read it/, "the poll");
      const poll = results.at(-1)!;
      assert.match(outputOf(poll), /^42$/m);
      assert.equal(headerOf(poll).user_input, "11 bytes");
      tui.model.script = steps(call("kill_session", { session_id: id }), say("stopped python"));
      tui.type("stop python");
      await tui.waitForScreen(/stopped python/, "the kill");
    });

    it("Ctrl+C and arrow keys reach a program in raw mode, and the overlay closes by itself when the job exits", async () => {
      results.length = 0;
      tui.model.script = recording(
        steps(
          call("exec_command", {
            cmd: "stty raw -echo; timeout --foreground 6 cat -v; stty sane; echo; echo bye",
            tty: true,
            yield_time_ms: 500,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "press some keys" }),
          say("keys pressed"),
        ),
      );
      tui.type("try the keys");
      await tui.waitForScreen(OVERLAY, "the overlay");
      tui.key("C-c");
      tui.key("Up");
      tui.type("x", false);
      await tui.waitForScreen(/\^C\^\[(\[|O)Ax/, "the keys as cat -v shows them");
      await tui.waitForScreen(/ended \(exit 0\) · closing/, "the exit on the overlay", 15_000);
      await tui.waitForScreen(/keys pressed/, "the overlay closed and the call returned");
      await waitFor(() => !OVERLAY.test(tui.screen()), "the overlay to be gone", 10_000, 100);
      const asked = results.find((text) => /user_input/.test(text))!;
      assert.match(headerOf(asked).user_input!, /^\d+ bytes$/);
    });

    it("ask_user on a pipe job: the row has no time limit while the person types, the one-line input closes when the job exits, and the call returns the exit with 0 bytes", async () => {
      results.length = 0;
      tui.model.script = recording(
        steps(
          call("exec_command", { cmd: "sleep 4; echo bye; exit 3", yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "Your one line, please" }),
          say("the input came back"),
        ),
      );
      tui.type("ask me on a pipe");
      // The words show twice while the input is open (the call's row and the input's title), once after.
      const shown = () => tui.screen().split("Your one line, please").length - 1;
      await waitFor(() => shown() === 2, "the one-line input", 15_000, 50);
      const typing = await tui.waitForScreen(/the user is typing \(no time limit\)/, "the row while the person types");
      assert.doesNotMatch(typing, /wait ≤/, "typing has no window");
      await tui.waitForScreen(/the input came back/, "the input closed and the call returned", 15_000);
      await waitFor(() => shown() === 1, "the input gone", 5_000, 100);
      const asked = results.find((text) => /user_input/.test(text))!;
      assert.equal(headerOf(asked).exit_code, "3");
      assert.equal(headerOf(asked).user_input, "0 bytes");
    });

    it("the overlay closes when the job is stopped at its deadline, and the call returns that exit", async () => {
      results.length = 0;
      tui.model.script = recording(
        steps(
          call("exec_command", { cmd: "sleep 300", tty: true, yield_time_ms: 250, timeout_s: 3 }),
          (view) => call("write_stdin", { session_id: firstSession(view), ask_user: "wait for the deadline" }),
          say("the overlay came back"),
        ),
      );
      tui.type("ask me on a terminal");
      await tui.waitForScreen(OVERLAY, "the overlay");
      await tui.waitForScreen(/ended \(killed by SIGTERM\) · closing|ended \(exit 143\) · closing/, "the stop on the overlay", 15_000);
      await tui.waitForScreen(/the overlay came back/, "the overlay closed and the call returned", 15_000);
      await waitFor(() => !OVERLAY.test(tui.screen()), "the overlay to be gone", 10_000, 100);
      const asked = results.find((text) => /user_input/.test(text))!;
      assert.equal(headerOf(asked).killed_by, "deadline");
      assert.equal(headerOf(asked).user_input, "0 bytes");
    });
  });
}
