/**
 * The terminal UI in a real interactive Pi inside tmux, on every host: the footer counts running
 * jobs and clears after they exit; /unified-exec-sessions kills a chosen job; a child printing OSC 52
 * (clipboard) and OSC 0 (title) sequences changes neither the pane title nor the clipboard.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";
import { TmuxPi } from "../helpers/tmux.ts";

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
        call("exec_command", { cmd: "printf '\\033]52;c;cHduZWQ=\\007\\033]0;pwned\\007\\033[2J'; echo printed-safely; sleep 2", yield_time_ms: 1_000 }),
        say("started the job"),
      );
      tui.type("start the hostile job");
      const screen = await tui.waitForScreen(/unified-exec: 1 session running/, "the footer status");
      assert.match(screen, /printed-safely/);
      assert.match(screen, /yielded 1\.0s · session_id=\d+/);
      assert.doesNotMatch(tui.paneTitle(), /pwned/, "no OSC 0 title change reached the terminal");
      assert.doesNotMatch(tui.buffers(), /pwned/, "no OSC 52 clipboard write reached the terminal");
      await tui.waitForScreen(/started the job/, "the final answer");
      await waitFor(() => !/unified-exec: \d+ session/.test(tui.screen()), "the footer to clear after the exit", 15_000, 100);
    });

    it("/unified-exec-sessions kills the chosen job", async () => {
      tui.model.script = steps(call("exec_command", { cmd: "echo pid=$$; sleep 300", yield_time_ms: 500 }), say("long job started"));
      tui.type("start a long job");
      const screen = await tui.waitForScreen(/long job started[\s\S]*unified-exec: 1 session running/, "the long job");
      const pid = Number(/pid=(\d+)/.exec(screen)?.[1]);
      assert.ok(pid > 0 && processAlive(pid));
      tui.type("/unified-exec-sessions");
      await tui.waitForScreen(/\d+ · echo pid=\$\$; sleep 300/, "the sessions picker");
      tui.key("Enter");
      await tui.waitForScreen(/Kill \(SIGTERM, then SIGKILL after 2 s\)/, "the actions");
      tui.key("Enter");
      await waitFor(() => !processAlive(pid), "the chosen job to be killed", 10_000);
      await waitFor(() => !/unified-exec: \d+ session/.test(tui.screen()), "the footer to clear", 10_000, 100);
    });
  });
}
