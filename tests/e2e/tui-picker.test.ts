/**
 * The sessions picker tells the truth and is safe, in Pi's real TUI (tmux, both hosts): ages move
 * while it is open, a job that ends while it is open shows as ended and offers no Kill; a server's
 * row shows its port and its armed wakes; a job's menu opens on View, which never stops the job;
 * "Kill all" asks `Kill all 2 jobs? y/N` and only `y` kills; a job's menu closes, saying so, when the
 * job ends while it is open. What it says is written for the person, never a tool's text for the model.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";
import { TmuxPi } from "../helpers/tmux.ts";

const ageOf = (screen: string, id: number) => new RegExp(`${id} · running (\\S+) · echo pid`).exec(screen)?.[1];

/** A server on a port the system picks: prints its pid, then `port=N` once it listens. */
const SERVER =
  "echo pid=$$; exec node -e \"require('http').createServer().listen(0, '127.0.0.1', function () { console.log('port=' + this.address().port) })\"";

/** The pids and session ids the model's results named, in call order. */
function startedIn(screen: string): { pids: number[]; ids: number[] } {
  return {
    pids: [...screen.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1])),
    ids: [...screen.matchAll(/session (\d+)/g)].map((match) => Number(match[1])),
  };
}

for (const host of PI_HOSTS) {
  describe(`the sessions picker on ${host.name}`, () => {
    let tui: TmuxPi;
    before(async () => {
      tui = await TmuxPi.start(host);
    });
    after(async () => {
      await tui?.close();
    });

    it("ages move while it is open; a job killed meanwhile shows as ended, and its menu offers View, not Kill", async () => {
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
      const menu = await tui.waitForScreen(/View the last lines of its output/, "the actions of an ended job");
      assert.doesNotMatch(menu, /Kill \(SIGTERM/, "nothing to kill");
      tui.key("Enter");
      const view = await tui.waitForScreen(
        new RegExp(`${id} · exit 143 after \\S+ · echo pid=\\$\\$; sleep 300 — the last line of its output`),
        "the view of the ended job, one line said in the singular",
      );
      assert.match(view, new RegExp(`pid=${pid}`));
      assert.doesNotMatch(view, /Unknown session_id|exec_command \{/, "never a tool's text for the model");
      tui.key("Escape");
      await waitFor(() => !/Esc, Enter or q to close/.test(tui.screen()), "the view to close", 10_000, 100);
      assert.equal(processAlive(pid), false);
    });

    it("a server's row shows its port and its wakes; its menu opens on View, and Enter, Enter views it without stopping it", async () => {
      tui.model.script = steps(
        callAll(
          ["exec_command", { cmd: SERVER, until_pattern: "^port=", yield_time_ms: 20_000, wake_on_pattern: "(?i)error" }],
          ["exec_command", { cmd: "echo pid=$$; exec sleep 300", yield_time_ms: 500, on_exit: "wake" }],
        ),
        say("server and sleeper started"),
      );
      tui.type("start a server and a sleeper");
      const started = await tui.waitForScreen(/server and sleeper started/, "both jobs");
      const port = /port=(\d+)/.exec(started)?.[1];
      const { pids } = startedIn(started.slice(started.lastIndexOf("start a server and a sleeper")));
      assert.ok(port && pids.length === 2, started);
      tui.type("/unified-exec-sessions");
      const picker = await tui.waitForScreen(
        new RegExp(`(\\d+) · running \\S+ · echo pid=.*node -e.* :${port} \\[wake /\\(\\?i\\)error/\\]`),
        "the server's row with its port and pattern wake",
      );
      assert.match(picker, /\d+ · running \S+ · echo pid=\$\$; exec sleep 300 \[wake\]/, "the sleeper's exit wake");
      tui.key("Enter");
      await tui.waitForScreen(/View the last lines of its output[\s\S]*Kill \(SIGTERM/, "the server's actions");
      tui.key("Enter");
      await tui.waitForScreen(
        new RegExp(`:${port} .*— the last 2 lines of its output[\\s\\S]*port=${port}`),
        "the view, opened by Enter, Enter",
      );
      tui.key("Escape");
      await waitFor(() => !/Esc, Enter or q to close/.test(tui.screen()), "the view to close", 10_000, 100);
      assert.ok(pids.every(processAlive), "Enter, Enter never kills");

      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/Kill all/, "the picker");
      tui.key("Up");
      tui.key("Up");
      tui.key("Enter");
      await tui.waitForScreen(/Kill all 2 jobs\? y\/N/, "the question");
      tui.type("n", false);
      await waitFor(() => !/Kill all 2 jobs\?/.test(tui.screen()), "the question to go away at n", 10_000, 100);
      assert.ok(pids.every(processAlive), "n kills nothing");
      tui.key("Enter");
      await tui.waitForScreen(/Kill all 2 jobs\? y\/N/, "the question again");
      tui.type("y", false);
      await waitFor(() => pids.every((pid) => !processAlive(pid)), "y to kill both", 10_000);
      await tui.waitForScreen(
        /Session \d+ stopped \(exit 143 after \S+\); all its processes are gone\.[\s\S]*Session \d+ stopped/,
        "what happened, in the person's words",
      );
    });

    it("a job's menu closes, saying so, when the job ends while it is open", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "echo pid=$$; sleep 300", yield_time_ms: 500 }), say("started another sleeper"));
      tui.type("start another sleeper");
      const started = await tui.waitForScreen(/started another sleeper/, "the job");
      const pid = Number([...started.matchAll(/pid=(\d+)/g)].at(-1)?.[1]);
      const id = Number([...started.matchAll(/session (\d+)/g)].at(-1)?.[1]);
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(new RegExp(`${id} · running \\S+ · echo pid`), "the picker");
      tui.key("Enter");
      await tui.waitForScreen(/Type into it/, "the job's menu");
      process.kill(pid, "SIGTERM");
      const told = await tui.waitForScreen(
        new RegExp(`Session ${id} ended \\(exit 143 after \\S+\\) while its menu was open; the menu was closed\\.`),
        "the menu closed by the job's end",
        10_000,
      );
      assert.doesNotMatch(told, /Type into it/, "no action is left on screen for a job that ended");
    });
  });
}
