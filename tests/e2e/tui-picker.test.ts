/**
 * The sessions picker tells the truth, in Pi's real TUI (tmux, both hosts): ages move while it is
 * open, a job that ends while it is open shows as ended, and what it says is written for the person
 * (Kill on a job that already ended), never a tool's text for the model.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";
import { TmuxPi } from "../helpers/tmux.ts";

const ageOf = (screen: string, id: number) => new RegExp(`${id} · running (\\S+) · echo pid`).exec(screen)?.[1];

for (const host of PI_HOSTS) {
  describe(`the sessions picker on ${host.name}`, () => {
    let tui: TmuxPi;
    before(async () => {
      tui = await TmuxPi.start(host);
    });
    after(async () => {
      await tui?.close();
    });

    it("ages move while it is open; a job killed meanwhile shows as ended; Kill on it says so in the person's words", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "echo pid=$$; sleep 300", yield_time_ms: 500 }), say("started the sleeper"));
      tui.type("start a sleeper");
      const started = await tui.waitForScreen(/started the sleeper/, "the job");
      const pid = Number(/pid=(\d+)/.exec(started)?.[1]);
      const id = Number(/session (\d+)/.exec(started)?.[1]);
      tui.type("/unified-exec-sessions");
      const first = ageOf(await tui.waitForScreen(new RegExp(`${id} · running \\S+ · echo pid`), "the picker"), id);
      await waitFor(
        () => {
          const now = ageOf(tui.screen(), id);
          return now !== undefined && now !== first;
        },
        "the age to move while the picker is open",
        10_000,
        200,
      );
      process.kill(pid, "SIGTERM");
      await tui.waitForScreen(
        new RegExp(`${id} · exit 143 after \\S+ · echo pid`),
        "the job shown as ended, the picker still open",
        10_000,
      );
      tui.key("Enter");
      await tui.waitForScreen(/Kill \(SIGTERM/, "the actions of an ended job");
      tui.key("Down");
      tui.key("Enter");
      const told = await tui.waitForScreen(
        new RegExp(`Session ${id} already ended \\(exit 143 after \\S+\\); nothing to kill\\.`),
        "the person's message",
      );
      assert.doesNotMatch(told, /Unknown session_id|exec_command/, "never a tool's text for the model");
      assert.equal(processAlive(pid), false);
    });
  });
}
