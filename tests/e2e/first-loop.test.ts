/**
 * The first loop of unified exec through the real Pi CLI (RPC mode, offline faux model) on the
 * newest host: start a job, yield, poll for the delta, see the exit once; and every bad input of
 * this loop refused with a clear error, nothing spawned and nothing lost.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, steps } from "../helpers/scripted-model.ts";

for (const host of NEWEST_HOST_ONLY) {
  describe(`first job loop on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("a short command returns its output and exit code, with no session_id", async () => {
      const run = await pi.run("short", steps(call("exec_command", { cmd: "echo out; exit 3" })));
      const [result] = run.tools;
      assert.ok(result);
      assert.equal(result.isError, false, "a failing command is still a successful tool call");
      const header = headerOf(result.text);
      assert.equal(result.text.split("\n")[0], "[exited]");
      assert.equal(header.exit_code, "3");
      assert.equal(header.session_id, undefined);
      // The lean header: only what the model acts on; the rest stays structured.
      assert.deepEqual(Object.keys(header), ["exit_code", "log_path", "wall_time_seconds"]);
      assert.match(header.log_path ?? "", /\/pi-unified-exec-[^/]+\/\d+\.log$/);
      assert.equal(result.structuredContent.cwd, pi.dirs.cwd);
      assert.match(result.structuredContent.chunk_id, /^[0-9a-f]{6}$/);
      assert.equal(result.structuredContent.tty, false);
      assert.equal(result.structuredContent.output_bytes_total, 4);
      assert.equal(outputOf(result.text), "out\n");
      assert.equal(result.structuredContent.status, "exited");
      assert.equal(result.structuredContent.exit_code, 3);
      assert.equal(result.structuredContent.output, "out\n");
      assert.equal(result.details.exit_code, 3);
      assert.equal(result.details.output, undefined, "details never carry the output");
    });

    it("login runs bash and sh as login shells (Codex's parameter); for cmd or powershell it is refused before anything runs", async () => {
      const run = await pi.run(
        "login",
        steps(
          callAll(
            ["exec_command", { cmd: "shopt -q login_shell && echo login || echo plain", login: true }],
            ["exec_command", { cmd: "shopt -q login_shell && echo login || echo plain" }],
            ["exec_command", { cmd: "touch login-refused", shell: "powershell", login: true }],
          ),
        ),
      );
      const [login, plain, refused] = inCallOrder(run);
      assert.equal(outputOf(login!.text), "login\n");
      assert.equal(login!.details.login, true);
      assert.equal(outputOf(plain!.text), "plain\n");
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /login: true starts a login shell/);
      assert.equal(existsSync(join(pi.dirs.cwd, "login-refused")), false);
    });

    it("stderr is merged into the output", async () => {
      const run = await pi.run("stderr", steps(call("exec_command", { cmd: "echo to-stdout; sleep 0.05; echo to-stderr >&2" })));
      assert.equal(outputOf(run.tools[0]!.text), "to-stdout\nto-stderr\n");
    });

    it("a job outliving its window returns a session_id; a poll returns only the new output and the exit; then the id is unknown", async () => {
      const run = await pi.run(
        "long job",
        steps(
          call("exec_command", { cmd: "echo first; sleep 1; echo second", yield_time_ms: 300 }),
          (view) => call("write_stdin", { session_id: view.last[0]!.details.session_id }),
          (view) => call("write_stdin", { session_id: view.results[0]!.details.session_id }),
        ),
      );
      const [started, polled, again] = run.tools;
      assert.ok(started && polled && again);
      const sessionId = headerOf(started.text).session_id;
      assert.match(sessionId ?? "", /^\d+$/);
      assert.equal(started.text.split("\n")[0], "[still running]");
      assert.equal(headerOf(started.text).exit_code, undefined);
      assert.equal(outputOf(started.text), "first\n");
      assert.equal(started.structuredContent.session_id, Number(sessionId));

      assert.equal(polled.isError, false);
      assert.equal(headerOf(polled.text).exit_code, "0");
      assert.equal(headerOf(polled.text).session_id, undefined);
      assert.equal(outputOf(polled.text), "second\n");
      assert.equal(polled.structuredContent.output_bytes_total, 13);
      assert.ok(headerOf(polled.text).log_path, "the exit names the log again");
      assert.ok(polled.durationMs! < 4_000, `the poll returned at the exit (${polled.durationMs} ms), not after its 5 s minimum`);

      assert.equal(again.isError, true);
      assert.match(again.text, new RegExp(`Unknown session_id ${sessionId}`));
    });

    it("`sleep 3 & exit 0` returns soon after the shell exits, still running, with the shell's exit code and what runs on", async () => {
      const run = await pi.run("background", steps(call("exec_command", { cmd: "sleep 3 & exit 0", yield_time_ms: 10_000 })));
      const text = run.tools[0]!.text;
      const header = headerOf(text);
      assert.equal(text.split("\n")[0], "[still running]");
      assert.ok(header.session_id, text);
      assert.equal(header.shell_exit_code, "0");
      assert.match(header.background ?? "", /^1 process still runs: sleep 3 \(pid \d+\); kill_session stops it$/);
      assert.ok(Number(header.wall_time_seconds) < 5, `took ${header.wall_time_seconds} s; the window must not be waited out`);
      await pi.run("stop it", steps(call("kill_session", { session_id: Number(header.session_id) })));
    });

    it("runs under sh when asked", async () => {
      const run = await pi.run("sh", steps(call("exec_command", { cmd: "echo $0", shell: "sh" })));
      assert.match(outputOf(run.tools[0]!.text), /(^|\/)sh\n$/);
    });

    it("strips terminal control sequences from the model's text", async () => {
      const run = await pi.run(
        "colours",
        steps(call("exec_command", { cmd: "printf '\\033[1;31mred\\033[0m \\033]0;title\\007done\\r\\n'" })),
      );
      assert.equal(outputOf(run.tools[0]!.text), "red done\n");
    });

    it("refuses bad input with a clear error and spawns nothing", async () => {
      const marker = (name: string) => join(pi.dirs.cwd, name);
      const run = await pi.run(
        "bad input",
        steps(
          callAll(
            ["exec_command", { cmd: "touch unknown-field", bogus: 1 }],
            ["write_stdin", { session_id: 9999 }],
            ["exec_command", { cmd: "" }],
            ["exec_command", { cmd: "touch missing-workdir", workdir: "does/not/exist" }],
            ["exec_command", { cmd: "touch bad-shell", shell: "fish" }],
          ),
        ),
      );
      const [unknownField, unknownSession, emptyCmd, missingWorkdir, badShell] = inCallOrder(run);
      for (const result of [unknownField, unknownSession, emptyCmd, missingWorkdir, badShell])
        assert.equal(result?.isError, true, result?.text);
      assert.match(unknownField!.text, /unknown field "bogus"/);
      assert.match(
        unknownField!.text,
        /Accepted fields: cmd, workdir, shell, tty, cols, rows, yield_time_ms, until_pattern, until_quiet_ms, until_listening, screen, on_exit, wake_on_pattern, login, max_output_tokens, timeout_s\./,
      );
      assert.match(unknownSession!.text, /Unknown session_id 9999/);
      assert.match(emptyCmd!.text, /cmd is empty/);
      assert.match(missingWorkdir!.text, new RegExp(`workdir does not exist: ${join(pi.dirs.cwd, "does/not/exist")}`));
      assert.match(badShell!.text, /shell must be one of "bash", "sh", "zsh", "cmd", "powershell", "pwsh", got the string "fish"/);
      for (const name of ["unknown-field", "missing-workdir", "bad-shell"]) assert.equal(existsSync(marker(name)), false, `${name} ran`);
    });

    it("refuses an empty poll above the cap with tool_time_utc, and the job is not lost", async () => {
      const stopFile = join(pi.dirs.cwd, "stop-waiting");
      const run = await pi.run(
        "poll cap",
        steps(
          call("exec_command", { cmd: "echo waiting; while [ ! -e stop-waiting ]; do sleep 0.05; done; echo stopped", yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: view.last[0]!.details.session_id, yield_time_ms: 290_001 }),
          (view) => {
            writeFileSync(stopFile, "");
            return call("write_stdin", { session_id: view.results[0]!.details.session_id, yield_time_ms: 10_000 });
          },
        ),
      );
      const [started, refused, polled] = run.tools;
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /yield_time_ms 290001 is above the 290000 ms limit of an empty poll/);
      assert.match(refused!.text, /tool_time_utc: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
      assert.equal(outputOf(started!.text), "waiting\n");
      assert.equal(headerOf(polled!.text).exit_code, "0");
      assert.equal(outputOf(polled!.text), "stopped\n");
    });
  });
}
