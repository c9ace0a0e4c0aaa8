import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ptyCommand } from "../../../src/core/processes/fd-hygiene.ts";
import { taskkillCommand } from "../../../src/core/processes/process-group.ts";
import { jobEnvironment } from "../../../src/core/request/shell.ts";
import { terminalSize } from "../../../src/core/screen/terminal-size.ts";

describe("job environment", () => {
  const base = { PATH: "/usr/bin:/bin", PAGER: "less", GIT_PAGER: "less -R", TERM: "screen", EDITOR: "vim", HOME: "/home/me" };

  it("pipes: pagers off, editor off, the inherited TERM kept", () => {
    const env = jobEnvironment(base, { tty: false });
    assert.equal(env.PAGER, "cat");
    assert.equal(env.GIT_PAGER, "cat");
    assert.equal(env.GH_PAGER, "cat");
    assert.equal(env.GIT_EDITOR, ":");
    assert.equal(env.TERM, "screen");
    assert.equal(env.HOME, "/home/me");
  });

  it("PTYs: pagers off, TERM=xterm-256color, the user's editor kept", () => {
    const env = jobEnvironment(base, { tty: true });
    assert.equal(env.PAGER, "cat");
    assert.equal(env.TERM, "xterm-256color");
    assert.equal(env.GIT_EDITOR, undefined);
    assert.equal(env.EDITOR, "vim");
  });

  it("pipes get PYTHONUNBUFFERED=1 unless the environment sets it (even empty); PTYs are line-buffered and get nothing", () => {
    assert.equal(jobEnvironment(base, { tty: false }).PYTHONUNBUFFERED, "1");
    assert.equal(jobEnvironment({ ...base, PYTHONUNBUFFERED: "0" }, { tty: false }).PYTHONUNBUFFERED, "0");
    assert.equal(jobEnvironment({ ...base, PYTHONUNBUFFERED: "" }, { tty: false }).PYTHONUNBUFFERED, "");
    assert.equal(jobEnvironment(base, { tty: true }).PYTHONUNBUFFERED, undefined);
  });

  it("PTYs on Linux: a wrapper leads the session and runs the shell as its child, the environment unchanged; on macOS (platform mocked) the shell is exec'd and Node programs require the SIGHUP listener after the user's NODE_OPTIONS", () => {
    const env = { ...base, NODE_OPTIONS: "--max-old-space-size=4096" };
    const linux = ptyCommand("/bin/bash", ["-c", "npm run dev &"], env, "linux");
    assert.deepEqual(linux.args.slice(0, 2), ["--posix", "-m"]);
    assert.deepEqual(linux.args.slice(-3), ["/bin/bash", "-c", "npm run dev &"]);
    assert.doesNotMatch(linux.args[3]!, /exec "\$0"/);
    assert.equal(linux.env, env);
    const mac = ptyCommand("/bin/bash", ["-c", "npm run dev &"], env, "darwin");
    assert.match(mac.args.find((arg) => arg.startsWith("trap"))!, /exec "\$0" "\$@"$/);
    assert.match(mac.env.NODE_OPTIONS!, /^--max-old-space-size=4096 --require ".*\/src\/core\/processes\/node-hangup\.cjs"$/);
    assert.equal(env.NODE_OPTIONS, "--max-old-space-size=4096", "the caller's environment is not changed");
  });

  it("puts Pi's bin directory first on PATH, once", () => {
    assert.equal(jobEnvironment(base, { tty: false, binDir: "/agent/bin" }).PATH, "/agent/bin:/usr/bin:/bin");
    assert.equal(jobEnvironment({ PATH: "/agent/bin:/bin" }, { tty: false, binDir: "/agent/bin" }).PATH, "/agent/bin:/bin");
  });

  it("does not change the host's environment", () => {
    const host = { ...base };
    jobEnvironment(host, { tty: true, binDir: "/x" });
    assert.deepEqual(host, base);
  });
});

describe("terminal size", () => {
  it("defaults to 120×30 and clamps to [20, 500] × [5, 300], saying what was asked", () => {
    assert.deepEqual(terminalSize(undefined, undefined), { cols: 120, rows: 30 });
    assert.deepEqual(terminalSize(100, 40), { cols: 100, rows: 40 });
    assert.deepEqual(terminalSize(5, 1000), { cols: 20, rows: 300, requestedCols: 5, requestedRows: 1000 });
    assert.deepEqual(terminalSize(-3, 2), { cols: 20, rows: 5, requestedCols: -3, requestedRows: 2 });
  });

  it("a resize may change one dimension and keep the other", () => {
    assert.deepEqual(terminalSize(90, undefined, { cols: 100, rows: 40 }), { cols: 90, rows: 40 });
  });
});

// Simulated: the Windows kill command is built for a Windows environment; only CI runs it.
describe("Windows termination (simulated)", () => {
  it("runs taskkill by absolute path from SystemRoot, on the whole tree, forcefully", () => {
    assert.deepEqual(taskkillCommand(4242, { SystemRoot: "D:\\Win" }), {
      file: "D:\\Win\\System32\\taskkill.exe",
      args: ["/PID", "4242", "/T", "/F"],
    });
    assert.equal(taskkillCommand(1, {}).file, "C:\\Windows\\System32\\taskkill.exe");
  });
});
