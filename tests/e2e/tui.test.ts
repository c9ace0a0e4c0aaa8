/**
 * The terminal UI in a real interactive Pi inside tmux, on every host: the footer counts running
 * jobs and clears after they exit; /unified-exec-sessions kills a chosen job and views a PTY job's
 * screen in a live panel; a child printing OSC 52
 * (clipboard) and OSC 0 (title) sequences changes neither the pane title nor the clipboard; and the
 * same sequences in every argument of every tool, in a workdir and a command, reach the terminal
 * only as visible escapes (results, errors and the wake row included).
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { call, callAll, type ModelView, say, steps } from "../helpers/scripted-model.ts";
import { TmuxPi } from "../helpers/tmux.ts";

/**
 * Everything a terminal could act on: an OSC 52 clipboard write, OSC 0 and 2 titles, an OSC 8 link,
 * a DCS query, cursor moves, a screen clear, the alternate screen, mouse reporting, a bidi override.
 */
const HOSTILE =
  "\u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned-title\u0007\u001b]2;pwned-title2\u001b\\\u001b]8;;http://pwned.example/\u001b\\link\u001b]8;;\u001b\\" +
  "\u001bP+q544e\u001b\\\u001b[5;5H\u001b[2J\u001b[?1049h\u001b[?1000h\u009b3J\u202Eevil";
/** The same as a directory name (no slash). */
const HOSTILE_DIR = HOSTILE.replace(/\//g, "");
/** An escape sequence the terminal may hold: only SGR styling is expected in `capture-pane -e`. */
const NOT_SGR = /\u001b(?!\[[0-9;:]*m)/;

/** The styling (the SGR sequences in effect) where `pattern` first matches the drawn text of a line. */
function styleAt(painted: string, pattern: RegExp): string | undefined {
  for (const line of painted.split("\n")) {
    let plain = "";
    const styles: [number, string][] = [];
    for (const part of line.split(/(\u001b\[[0-9;:]*m)/)) {
      if (part.startsWith("\u001b[")) styles.push([plain.length, part]);
      else plain += part;
    }
    const match = pattern.exec(plain);
    if (!match) continue;
    const active = styles.filter(([at]) => at <= match.index).map(([, sgr]) => sgr);
    const reset = active.findLastIndex((sgr) => sgr === "\u001b[0m" || sgr === "\u001b[m");
    return active.slice(reset + 1).join("");
  }
  return undefined;
}

/** Every argument of `tool` set to `value`. */
const everyArgument = (keys: string[], value: unknown) => Object.fromEntries(keys.map((key) => [key, value]));
const EXEC_ARGS = ["cmd", "workdir", "shell", "tty", "cols", "rows", "yield_time_ms", "timeout_s", "on_exit"];
const WRITE_ARGS = ["session_id", "chars", "chars_b64", "cols", "rows", "yield_time_ms", "yield_until"];

for (const host of PI_HOSTS) {
  describe(`the TUI in tmux on ${host.name}`, () => {
    let tui: TmuxPi;
    before(async () => {
      tui = await TmuxPi.start(host);
    });
    after(async () => {
      await tui?.close();
    });

    it("shows the running count in the footer, clears it after the exit, and keeps hostile output inside the tool row", async () => {
      tui.model.script = steps(
        call("exec_command", {
          cmd: "printf '\\033]52;c;cHduZWQ=\\007\\033]0;pwned\\007\\033[2J'; echo printed-safely; sleep 2",
          yield_time_ms: 1_000,
        }),
        say("started the job"),
      );
      tui.type("start the hostile job");
      const screen = await tui.waitForScreen(/unified-exec: 1 session running/, "the footer status");
      assert.match(screen, /printed-safely/);
      // The row shows the call's real duration: the 1 s window plus whatever a loaded machine adds.
      assert.match(screen, /yielded \d+\.\ds · session \d+/);
      assert.doesNotMatch(tui.paneTitle(), /pwned/, "no OSC 0 title change reached the terminal");
      assert.doesNotMatch(tui.buffers(), /pwned/, "no OSC 52 clipboard write reached the terminal");
      await tui.waitForScreen(/started the job/, "the final answer");
      await waitFor(() => !/unified-exec: \d+ session/.test(tui.screen()), "the footer to clear after the exit", 15_000, 100);
    });

    it("hostile sequences in every argument, a workdir and a command reach the terminal only as visible escapes", async () => {
      mkdirSync(join(tui.dirs.cwd, HOSTILE_DIR));
      const modes = tui.pane("#{alternate_on} #{mouse_any_flag} #{mouse_all_flag}");
      const sessions = (view: ModelView) => view.last.map((result) => result.details?.session_id as number);
      tui.model.wakeScript = () => say("woken by the hostile job");
      tui.model.script = steps(
        callAll(
          [
            "exec_command",
            {
              cmd: `printf '%s\\n' '${HOSTILE}'; echo hostile-job-ran; sleep 3`,
              workdir: HOSTILE_DIR,
              yield_time_ms: 500,
              on_exit: "wake",
            },
          ],
          ["exec_command", { cmd: "sleep 30", yield_time_ms: 250 }],
        ),
        (view) => {
          const [, reader] = sessions(view);
          return callAll(
            ["write_stdin", { session_id: reader, chars: HOSTILE, yield_time_ms: 250 }],
            ["list_sessions", {}],
            ["exec_command", everyArgument(EXEC_ARGS, HOSTILE)],
            ["exec_command", everyArgument(EXEC_ARGS, { nested: [HOSTILE] })],
            ["write_stdin", everyArgument(WRITE_ARGS, HOSTILE)],
            ["write_stdin", everyArgument(WRITE_ARGS, [HOSTILE, 7])],
            ["kill_session", { session_id: HOSTILE, signal: HOSTILE }],
            ["kill_session", { session_id: reader, signal: HOSTILE }],
            ["set_on_exit", { session_id: HOSTILE, on_exit: HOSTILE }],
            ["list_sessions", { [HOSTILE]: HOSTILE }],
          );
        },
        (view) =>
          call("kill_session", {
            session_id: view.results.find((result) => result.toolName === "write_stdin" && !result.isError)!.details.session_id,
          }),
        say("hostile calls done"),
      );
      // Pi redraws and scrolls: sample what the terminal holds while the calls are drawn.
      const samples: string[] = [];
      const sampler = setInterval(() => samples.push(tui.screenWithAttributes()), 150);
      try {
        tui.type("run the hostile calls");
        await tui.waitForScreen(/hostile calls done/, "the hostile calls", 30_000);
        await tui.waitForScreen(/woken by the hostile job/, "the wake turn", 30_000);
      } finally {
        clearInterval(sampler);
      }
      samples.push(tui.screenWithAttributes());
      const all = samples.join("\n");
      const unwrapped = all.replace(/\u001b\[[0-9;:]*m/g, "").replace(/\n +/g, "");
      assert.match(all, /hostile-job-ran/, "the job ran in the hostile workdir");
      assert.match(unwrapped, /\\e\]52;c;cHduZWQ=\\x07/, "the sequences were drawn as visible escapes");
      assert.match(unwrapped, /<U\+202E>evil/);
      assert.match(unwrapped, /⏰ session \d+ exited 0 after \d+\.\ds · printf/, "the wake row");
      assert.doesNotMatch(all, /\u202E|[\u0080-\u009f]/, "no bidi override or C1 control was drawn");
      const stray = NOT_SGR.exec(all);
      assert.equal(
        stray,
        null,
        `an escape sequence reached the terminal: ${JSON.stringify(all.slice(stray?.index ?? 0, (stray?.index ?? 0) + 40))}`,
      );
      assert.doesNotMatch(tui.paneTitle(), /pwned/, "no OSC 0/2 title change reached the terminal");
      assert.equal(tui.buffers().trim(), "", "no OSC 52 clipboard write reached the terminal");
      assert.equal(
        tui.pane("#{alternate_on} #{mouse_any_flag} #{mouse_all_flag}"),
        modes,
        "no switch to the alternate screen or mouse mode",
      );
    });

    it("a quiet wait shows a ticking counter and its real window from the start", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "sleep 3; echo quiet-job-done", yield_time_ms: 3_000 }), say("quiet wait over"));
      const seen = new Set<string>();
      const rows: string[] = [];
      const sampler = setInterval(() => {
        const screen = tui.screenWithAttributes();
        rows.push(screen);
        for (const match of screen.replace(/\u001b\[[0-9;:]*m/g, "").matchAll(/elapsed (\d+\.\d)s · wait ≤ 3\.0s · session \d+/g))
          seen.add(match[1]!);
      }, 100);
      try {
        tui.type("wait quietly");
        await tui.waitForScreen(/quiet wait over/, "the quiet wait to end", 30_000);
      } finally {
        clearInterval(sampler);
      }
      const counts = [...seen].map(Number).sort((a, b) => a - b);
      assert.ok(counts.length >= 2, `the counter ticked while nothing was printed: ${JSON.stringify(counts)}`);
      assert.ok(counts[0]! <= 1.5, `the counter showed from the call's start: ${JSON.stringify(counts)}`);
      const stray = NOT_SGR.exec(rows.join("\n"));
      assert.equal(stray, null, "no raw escape sequence in any row");
    });

    it("Esc leaves the job running and says so; its wake arrives as a one-line row", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "sleep 4; echo esc-job-done", yield_time_ms: 30_000, on_exit: "wake" }));
      tui.model.wakeScript = () => say("woken after esc");
      tui.type("start and wait");
      await tui.waitForScreen(/elapsed \d+\.\ds · wait ≤ 30\.0s · session \d+/, "the waiting row");
      tui.key("Escape");
      const screen = await tui.waitForScreen(/still running in the background · session \d+ · wake armed/, "the Esc row");
      assert.doesNotMatch(screen, /cancelled after/);
      const woken = await tui.waitForScreen(/woken after esc/, "the wake turn", 30_000);
      assert.match(woken, /⏰ session \d+ exited 0 after [4-9]\.\ds · sleep 4; echo esc-job-done/);
      assert.doesNotMatch(woken, /write_stdin\(session_id\) returns any output/, "the model's wake text is not shown to the user");
    });

    it("list_sessions and kill_session are one line each; a failed exit is drawn in the error color", async () => {
      tui.model.script = steps(
        callAll(["exec_command", { cmd: "sleep 300", yield_time_ms: 250 }], ["exec_command", { cmd: "echo failing-step; exit 3" }]),
        () => call("list_sessions", {}),
        (view) =>
          call("kill_session", { session_id: view.results.find((result) => result.details?.session_id !== undefined)!.details.session_id }),
        () => call("kill_session", { session_id: 987_654 }),
        say("rows drawn"),
      );
      tui.type("draw the rows");
      const screen = await tui.waitForScreen(/rows drawn/, "the rows", 30_000);
      assert.match(screen, /^\s*\d+ running \d+\.\ds sleep 300$/m, "one list line per job");
      assert.match(screen, /■ stopped session \d+ · (exit 143 \(SIGTERM\)|killed by SIGTERM) · cleanup confirmed/, "the one-line kill row");
      assert.doesNotMatch(screen, /signal_sent:|escalated: false/, "the kill's model text is not dumped");
      const painted = tui.screenWithAttributes();
      assert.equal(NOT_SGR.exec(painted), null, "no raw escape sequence in any row");
      const failedColor = styleAt(painted, /took \d+\.\ds · exit 3/);
      const refusalColor = styleAt(painted, /Unknown session_id 987654/);
      assert.ok(failedColor, "the failed exit's footer is styled");
      assert.equal(failedColor, refusalColor, "a failed exit is drawn in the same color as an error");
      assert.notEqual(styleAt(painted, /yielded \d+\.\ds · session/), failedColor, "a running job's footer is not");
    });

    it("a flood's row says how much the model was not shown and that the log has it all", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "seq 1 2000000", yield_time_ms: 30_000 }), say("flood drawn"));
      tui.type("flood the row");
      const screen = await tui.waitForScreen(/flood drawn/, "the flood's row", 30_000);
      assert.match(screen, /^\s*2000000$/m, "the end of the output is drawn");
      assert.match(screen, /took \d+\.\ds · exit 0 · log: \S+ · 14\.9 MB not shown, full output in the log/);
    });

    it("/unified-exec-sessions kills the chosen job", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "echo pid=$$; sleep 300", yield_time_ms: 500 }), say("long job started"));
      tui.type("start a long job");
      const screen = await tui.waitForScreen(/long job started[\s\S]*unified-exec: 1 session running/, "the long job");
      const pid = Number(/pid=(\d+)/.exec(screen)?.[1]);
      assert.ok(pid > 0 && processAlive(pid));
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/\d+ · running \d+\.\ds · echo pid=\$\$; sleep 300/, "the sessions picker with each job's state and age");
      tui.key("Enter");
      await tui.waitForScreen(/Kill \(SIGTERM, then SIGKILL after 2 s\)/, "the actions");
      // View, Type into it, Kill: the menu opens on View, so Kill is two steps down.
      tui.key("Down");
      tui.key("Down");
      tui.key("Enter");
      await waitFor(() => !processAlive(pid), "the chosen job to be killed", 10_000);
      await waitFor(() => !/unified-exec: \d+ session/.test(tui.screen()), "the footer to clear", 10_000, 100);
    });

    it("/unified-exec-sessions views a PTY job's screen in a panel that redraws live and closes on Esc", async () => {
      const ticker = "echo pid=$$; i=0; while :; do i=$((i+1)); printf '\\033[H\\033[2Jtick %d' $i; sleep 0.3; done";
      tui.model.script = steps(call("exec_command", { cmd: ticker, tty: true, rows: 6, yield_time_ms: 500 }), say("ticker started"));
      tui.type("start a ticker");
      const started = await tui.waitForScreen(/ticker started[\s\S]*unified-exec: 1 session running/, "the ticker");
      const pid = Number([...started.matchAll(/pid=(\d+)/g)].at(-1)?.[1]); // the ticker, not an earlier test's job
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/\d+ · running \S+ · echo pid=\$\$; i=0/, "the sessions picker");
      tui.key("Enter");
      await tui.waitForScreen(/View its screen/, "the actions");
      tui.key("Enter");
      const panel = /screen 120×6, cursor 1,\d+\s*\n\s*tick (\d+)\s*\n[\s\S]*Esc, Enter or q to close/;
      const first = Number(panel.exec(await tui.waitForScreen(panel, "the job's screen"))?.[1]);
      await waitFor(() => Number(panel.exec(tui.screen())?.[1]) > first, "the panel to redraw the job's newer screen", 10_000, 100);
      tui.key("Escape");
      await waitFor(() => !/Esc, Enter or q to close/.test(tui.screen()), "the panel to close", 10_000, 100);
      assert.ok(processAlive(pid), "viewing never stops the job");
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/\d+ · running \S+ · echo pid=\$\$; i=0/, "the sessions picker");
      tui.key("Enter");
      await tui.waitForScreen(/Kill \(SIGTERM/, "the actions");
      tui.key("Down");
      tui.key("Down");
      tui.key("Enter");
      await waitFor(() => !processAlive(pid), "the ticker to be killed", 10_000);
    });
  });
}
