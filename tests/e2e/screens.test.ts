/**
 * Full-screen programs on a PTY through the real Pi CLI on both hosts: vim shows the file and its `~` filler and `ihello<Esc>:wq<CR>` writes it; a resize
 * during vim redraws to the new size; `top -d 1` repaints the normal screen, so its result is its
 * screen (one frame with its header lines) and it is not called waiting, until it stops and a log
 * scrolls; less shows one screen of a 500-line file and `q` returns results to the stream; a
 * cursor-position query gets its answer; screen: true without tty is refused before anything runs;
 * and /unified-exec-sessions "view" shows a job's screen without the model (RPC: a notification).
 * `.ci/run` installs vim, less and procps; here they must be present.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf, type ToolRecord } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, firstSession, steps } from "../helpers/scripted-model.ts";

/** A settled screen: the program printed nothing for this long after its last redraw. */
const SETTLED = { until_quiet_ms: 400, yield_time_ms: 10_000 };
const lines = (tool: ToolRecord) => outputOf(tool.text).split("\n");
const pty = { skip: SKIP_WITHOUT_PTY };

for (const host of PI_HOSTS) {
  describe(`screens of full-screen programs on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("vim shows the file and ~ filler on the alternate screen; ihello<Esc>:wq<CR> writes the file", pty, async () => {
      const file = join(pi.dirs.cwd, "notes.txt");
      writeFileSync(file, "alpha\nbeta\ngamma\n");
      const run = await pi.run(
        "edit notes.txt in vim",
        steps(call("exec_command", { cmd: "vim notes.txt", tty: true, cols: 80, rows: 24, ...SETTLED }), (view) =>
          call("write_stdin", { session_id: firstSession(view), chars: "ihello\\e:wq\\r", yield_time_ms: 10_000 }),
        ),
      );
      const [opened, written] = inCallOrder(run);
      const header = headerOf(opened!.text);
      assert.equal(header.view, "screen (alternate screen)", opened!.text);
      assert.equal(header.cursor, "1,1");
      const screen = lines(opened!);
      assert.equal(screen.length, 24, opened!.text);
      assert.deepEqual(screen.slice(0, 3), ["alpha", "beta", "gamma"]);
      assert.ok(
        screen.slice(3, 23).every((line) => line === "~"),
        opened!.text,
      );
      assert.equal(opened!.structuredContent.view, "screen (alternate screen)");
      assert.equal(headerOf(written!.text).exit_code, "0", written!.text);
      assert.equal(headerOf(written!.text).view, undefined, "vim left the alternate screen: the exit is the stream");
      assert.equal(readFileSync(file, "utf8"), "helloalpha\nbeta\ngamma\n");
    });

    it("a resize during vim redraws the screen to the new size", pty, async () => {
      const run = await pi.run(
        "resize vim",
        steps(
          call("exec_command", { cmd: "vim fresh.txt", tty: true, cols: 80, rows: 20, ...SETTLED }),
          (view) => call("write_stdin", { session_id: firstSession(view), cols: 100, rows: 30, ...SETTLED }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: ":q!\\r", yield_time_ms: 10_000 }),
        ),
      );
      const [small, large, quit] = inCallOrder(run);
      assert.equal(lines(small!).length, 20, small!.text);
      const resized = lines(large!);
      assert.equal(headerOf(large!.text).view, "screen (alternate screen)");
      assert.equal(resized.length, 30, large!.text);
      assert.ok(
        resized.slice(1, 29).every((line) => line === "~"),
        large!.text,
      );
      assert.equal(headerOf(quit!.text).exit_code, "0");
    });

    it(
      "top -d 1 returns its screen by itself (view: screen (repainting)) and is not called waiting; once it stops and a log scrolls, the stream",
      pty,
      async () => {
        const run = await pi.run(
          "run top",
          steps(
            call("exec_command", {
              cmd: "top -d 1 -n 8; seq 1 60; echo top-done; exec sleep 60",
              tty: true,
              cols: 120,
              rows: 30,
              yield_time_ms: 5_000,
            }),
            (view) => call("write_stdin", { session_id: firstSession(view), until_pattern: "^top-done$", yield_time_ms: 30_000 }),
            (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
          ),
        );
        const [screen, after] = inCallOrder(run);
        const header = headerOf(screen!.text);
        assert.equal(header.view, "screen (repainting)", screen!.text);
        assert.equal(header.input_wait, undefined, "top repaints by itself: polling moves it");
        const rows = lines(screen!);
        assert.match(rows[0]!, /^top - \d\d:\d\d:\d\d up /, screen!.text);
        assert.match(rows[1]!, /^Tasks: +\d+ total/);
        assert.match(rows[2]!, /^%Cpu\(s\):/);
        assert.match(rows[3]!, /^MiB Mem :/);
        assert.equal(rows.filter((row) => row.startsWith("Tasks:")).length, 1, "one frame");
        assert.ok(rows.length <= 30);
        assert.equal(headerOf(after!.text).view, undefined, after!.text);
        assert.match(outputOf(after!.text), /\n59\n60\ntop-done\n$/);
      },
    );

    it("less shows one screen of a 500-line file; q leaves the alternate screen and results return to the stream", pty, async () => {
      writeFileSync(join(pi.dirs.cwd, "big.txt"), Array.from({ length: 500 }, (_, i) => `${i + 1}\n`).join(""));
      const run = await pi.run(
        "page big.txt",
        steps(
          call("exec_command", {
            cmd: "LESS= LESSOPEN= less big.txt; echo left-less; exec sleep 60",
            tty: true,
            cols: 80,
            rows: 30,
            ...SETTLED,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "q", yield_time_ms: 10_000, until_pattern: "left-less" }),
          (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
        ),
      );
      const [paged, left] = inCallOrder(run);
      assert.equal(headerOf(paged!.text).view, "screen (alternate screen)", paged!.text);
      const screen = lines(paged!);
      assert.equal(screen.length, 30);
      assert.deepEqual(
        screen.slice(0, 29),
        Array.from({ length: 29 }, (_, i) => String(i + 1)),
      );
      assert.ok(!screen.includes("500"));
      assert.equal(headerOf(left!.text).view, undefined, left!.text);
      assert.equal(headerOf(left!.text).wait_status, "matched");
      assert.match(outputOf(left!.text), /left-less\n$/);
    });

    it("a cursor-position query gets its answer; screen: true without tty is refused before anything runs", pty, async () => {
      const run = await pi.run(
        "query the terminal",
        steps(
          call("exec_command", {
            cmd: `printf '\\033[6n'; IFS= read -rs -d R reply; echo "reply=\${reply#??}"`,
            tty: true,
            yield_time_ms: 10_000,
          }),
          call("exec_command", { cmd: "touch screened", screen: true }),
        ),
      );
      const [queried, refused] = inCallOrder(run);
      assert.equal(headerOf(queried!.text).exit_code, "0", queried!.text);
      assert.match(outputOf(queried!.text), /reply=\d+;\d+/);
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /screen: true .*tty: true/);
      assert.equal(existsSync(join(pi.dirs.cwd, "screened")), false);
    });

    it("/unified-exec-sessions views a job's screen without the model (RPC: a notification)", pty, async () => {
      writeFileSync(join(pi.dirs.cwd, "viewed.txt"), "first line\nsecond line\n");
      const started = await pi.run("open vim", steps(call("exec_command", { cmd: "vim viewed.txt", tty: true, rows: 10, ...SETTLED })));
      const id = started.tools[0]!.details.session_id as number;
      let dialogs = 0;
      pi.onUiRequest((request) => {
        if (request.method !== "select") return undefined;
        const options = request.options as string[];
        dialogs++;
        return { value: dialogs === 1 ? options.find((o) => o.startsWith(`${id} ·`)) : options.find((o) => o === "View its screen") };
      });
      const from = pi.records.length;
      try {
        const viewed = await pi.run("/unified-exec-sessions", steps());
        assert.equal(viewed.tools.length, 0, "no tool ran: the model was not involved");
        const shown = await pi.waitForRecord((r) => r.method === "notify" && /first line/.test(r.message), from, 10_000, "the view");
        const text = shown.message as string;
        assert.match(
          text,
          new RegExp(
            `^${id} · running \\S+ · vim viewed\\.txt — screen 120×10, cursor 1,1 \\(alternate screen\\)\\nfirst line\\nsecond line\\n~\\n`,
          ),
        );
      } finally {
        pi.onUiRequest(undefined);
      }
      // The view consumed nothing: the model's next read still shows the screen, and the job still runs.
      const next = await pi.run("quit vim", steps(call("write_stdin", { session_id: id, chars: ":q\\r", yield_time_ms: 10_000 })));
      assert.equal(headerOf(next.tools[0]!.text).exit_code, "0", next.tools[0]!.text);
    });
  });
}
