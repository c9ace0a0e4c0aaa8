/**
 * Interactive sessions through the real Pi CLI on the newest host: PTY REPLs, live resize, control
 * bytes on PTYs and pipes, a pager-free `git log`, and the host's shell settings. A second Pi runs
 * with a broken PTY module, a minimal PATH and Pi's shell settings set.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { currentShellHost, resolveShell } from "../../src/core/request/shell.ts";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, callAll, firstSession, steps } from "../helpers/scripted-model.ts";

for (const host of NEWEST_HOST_ONLY) {
  describe(`interactive sessions on ${host.name}`, { skip: SKIP_WITHOUT_PTY }, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("drives python3 -q in a PTY: print(6*7) answers 42, exit() reports exit 0", async () => {
      const run = await pi.run(
        "python",
        steps(
          // Each call returns at the prompt, however long a busy machine takes to print it.
          call("exec_command", { cmd: "python3 -q", tty: true, until_pattern: "^>>> $", yield_time_ms: 20_000 }),
          (view) =>
            call("write_stdin", { session_id: firstSession(view), chars: "print(6*7)\\r", until_pattern: "^>>> $", yield_time_ms: 20_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "exit()\\r", yield_time_ms: 5_000 }),
        ),
      );
      const [started, answered, exited] = run.tools;
      assert.equal(started!.structuredContent.tty, true);
      assert.equal(started!.structuredContent.cols, 120);
      assert.equal(headerOf(started!.text).cols, undefined, "the size the model asked for (the default) is not news");
      assert.match(outputOf(started!.text), />>> $/);
      assert.match(outputOf(answered!.text), /^print\(6\*7\)\n42\n>>> $/);
      assert.equal(headerOf(exited!.text).exit_code, "0");
    });

    it("Ctrl-C in a PTY interrupts sleep 30", async () => {
      const run = await pi.run(
        "pty interrupt",
        steps(call("exec_command", { cmd: "sleep 30", tty: true, yield_time_ms: 500 }), (view) =>
          call("write_stdin", { session_id: firstSession(view), chars: "\\x03", yield_time_ms: 5_000 }),
        ),
      );
      const interrupted = run.tools[1]!;
      assert.equal(headerOf(interrupted.text).exit_code, "130");
      assert.equal(headerOf(interrupted.text).signal, "SIGINT");
      assert.equal(headerOf(interrupted.text).input, "1 byte sent", "on a PTY the byte goes through the line discipline");
      assert.ok(interrupted.durationMs! < 5_000);
    });

    it("stty size sees cols/rows at start and after a live resize", async () => {
      const run = await pi.run(
        "resize",
        steps(
          call("exec_command", { cmd: "stty size; read line; stty size", tty: true, cols: 100, rows: 40, yield_time_ms: 1_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), cols: 90, rows: 20, chars: "\\r", yield_time_ms: 5_000 }),
        ),
      );
      const [started, resized] = run.tools;
      assert.equal(outputOf(started!.text), "40 100\n");
      assert.equal(outputOf(resized!.text), "\n20 90\n");
      assert.equal(headerOf(resized!.text).cols, "90");
      assert.equal(headerOf(resized!.text).rows, "20");
    });

    it("a resize alone counts as input: it waits like a write, not a 5 s poll", async () => {
      const run = await pi.run(
        "resize only",
        steps(
          call("exec_command", { cmd: "trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done", tty: true, yield_time_ms: 500 }),
          (view) => call("write_stdin", { session_id: firstSession(view), cols: 80, yield_time_ms: 1_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x03", yield_time_ms: 3_000 }),
        ),
      );
      const resized = run.tools[1]!;
      assert.equal(resized.details.yield_time_ms, 1_000);
      assert.ok(resized.durationMs! < 4_000, `${resized.durationMs} ms`);
      assert.match(outputOf(resized.text), /^30 80\n$/, "the child got SIGWINCH and saw the new width");
    });

    it("clamps an out-of-range size, visibly", async () => {
      const run = await pi.run("clamp", steps(call("exec_command", { cmd: "stty size", tty: true, cols: 5, rows: 1_000 })));
      const result = run.tools[0]!;
      assert.equal(outputOf(result.text), "300 20\n");
      assert.equal(result.details.cols, 20);
      assert.equal(result.details.requested_cols, 5);
      assert.equal(result.details.rows, 300);
      assert.equal(result.details.requested_rows, 1_000);
    });

    it("git log in a PTY finishes without waiting on a pager", async () => {
      const repo = join(pi.dirs.cwd, "repo");
      mkdirSync(repo);
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd: repo });
      git("init", "-q");
      git("commit", "-q", "--allow-empty", "-m", "first commit in the test repo");
      const run = await pi.run(
        "git log",
        steps(call("exec_command", { cmd: "git log", tty: true, workdir: "repo", yield_time_ms: 10_000 })),
      );
      const result = run.tools[0]!;
      assert.equal(headerOf(result.text).exit_code, "0", result.text);
      assert.match(outputOf(result.text), /first commit in the test repo/);
    });

    it("in pipe mode, sleep 30 + Ctrl-C ends it with an interrupt", async () => {
      const run = await pi.run(
        "pipe interrupt",
        steps(call("exec_command", { cmd: "sleep 30", yield_time_ms: 300 }), (view) =>
          call("write_stdin", { session_id: firstSession(view), chars: "\\x03", yield_time_ms: 5_000 }),
        ),
      );
      const interrupted = run.tools[1]!;
      assert.equal(headerOf(interrupted.text).input, "interrupt");
      assert.equal(headerOf(interrupted.text).signal, "SIGINT");
      assert.equal(headerOf(interrupted.text).exit_code, "130");
    });

    it("refuses a resize of a pipe session, touching nothing", async () => {
      const run = await pi.run(
        "pipe resize",
        steps(
          call("exec_command", { cmd: "cat", yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: firstSession(view), cols: 100, chars: "lost?\\n" }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "kept\\n", yield_time_ms: 1_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x04", yield_time_ms: 5_000 }),
        ),
      );
      const [, refused, echoed, ended] = run.tools;
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /cols and rows resize a terminal, but session \d+ runs on pipes/);
      assert.equal(outputOf(echoed!.text), "kept\n", "the refused call wrote nothing");
      assert.equal(headerOf(ended!.text).exit_code, "0");
    });
  });

  describe(`host settings and a missing PTY module on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, {
        env: { PI_UNIFIED_EXEC_PTY_MODULE: "no-such-pty-module" },
        setup: (dirs) => {
          // A PATH with only bash and sh, so a missing shell is certain; a wrapper as Pi's shellPath;
          // a tool in <agentDir>/bin; a command prefix that defines an alias.
          const minimal = join(dirs.root, "minimal-bin");
          mkdirSync(minimal);
          const host = currentShellHost();
          for (const name of ["bash", "sh"]) symlinkSync(resolveShell(name, host).path, join(minimal, name));
          const wrapper = join(dirs.root, "bash-wrapper");
          writeFileSync(wrapper, `#!/bin/sh\nexport VIA_SHELL_PATH=yes\nexec ${resolveShell("bash", host).path} "$@"\n`);
          chmodSync(wrapper, 0o755);
          mkdirSync(join(dirs.agentDir, "bin"));
          writeFileSync(join(dirs.agentDir, "bin", "pi-bin-probe"), "#!/bin/sh\necho probe-from-agent-bin\n");
          chmodSync(join(dirs.agentDir, "bin", "pi-bin-probe"), 0o755);
          writeFileSync(
            join(dirs.agentDir, "settings.json"),
            JSON.stringify({ shellPath: wrapper, shellCommandPrefix: "shopt -s expand_aliases; alias greet='echo hello from the prefix'" }),
          );
          return { PATH: minimal };
        },
      });
    });
    after(async () => {
      await pi?.close();
    });

    it("tty: true without a loadable PTY module is a clear error, nothing spawned; pipes still work", async () => {
      const run = await pi.run(
        "no pty",
        steps(callAll(["exec_command", { cmd: ": > pty-marker", tty: true }], ["exec_command", { cmd: "echo pipes work" }])),
      );
      const [refused, piped] = inCallOrder(run);
      assert.equal(refused!.isError, true);
      assert.match(refused!.text, /tty: true needs the PTY module no-such-pty-module, which could not be loaded/);
      assert.equal(existsSync(join(pi.dirs.cwd, "pty-marker")), false);
      assert.equal(outputOf(piped!.text), "pipes work\n");
    });

    it("honours Pi's shellPath and shellCommandPrefix, and puts <agentDir>/bin on PATH", async () => {
      const run = await pi.run("settings", steps(call("exec_command", { cmd: "echo via=$VIA_SHELL_PATH; greet; pi-bin-probe" })));
      assert.equal(outputOf(run.tools[0]!.text), "via=yes\nhello from the prefix\nprobe-from-agent-bin\n");
    });

    it("a shell that does not exist is a clear error, nothing spawned", async () => {
      const run = await pi.run("no zsh", steps(call("exec_command", { cmd: ": > zsh-marker", shell: "zsh" })));
      assert.equal(run.tools[0]!.isError, true);
      assert.match(run.tools[0]!.text, /Shell "zsh" was not found on PATH/);
      assert.equal(existsSync(join(pi.dirs.cwd, "zsh-marker")), false);
    });
  });
}
