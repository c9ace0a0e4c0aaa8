/**
 * `npm run demo`: the newest Pi, offline, with the scripted tour model of examples/demo/. In JSON mode
 * (the same launcher and model, three prompts in one run) every scene is checked call by call: the
 * dev server answers, shows its request in a poll and is stopped; Python answers 42 on a PTY; a job's
 * exit starts a turn by itself. In tmux the real TUI opens with the prompts above the editor, a wake
 * arrives without any prompt, a request to scene 4's server wakes the agent with its error line quoted,
 * and quitting removes the demo's temporary agent dir. Nothing is written
 * to the user's ~/.pi (HOME is a fresh directory here, checked afterwards), and nothing named
 * `pi-unified-exec-*` stays in the temp dir (TMPDIR is a fresh directory too, so other tests' job logs
 * never count, and one left there by the demo is seen): the jobs' logs go away with the demo.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LOG_DIR_ENV } from "../../src/core/shared/constants.ts";
import { headerOf, inCallOrder, outputOf, type PiEvent, runOf, textOf } from "../helpers/events.ts";
import { REPO_ROOT } from "../helpers/hosts.ts";
import { waitFor } from "../helpers/processes.ts";
import { shellQuote, TmuxTerminal } from "../helpers/tmux.ts";

let home: string;
let temp: string;
before(() => {
  home = mkdtempSync(join(tmpdir(), "piue-demo-home-"));
  temp = mkdtempSync(join(tmpdir(), "piue-demo-tmp-"));
});
after(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(temp, { recursive: true, force: true });
});

/**
 * The environment of a user with this Node first on PATH, an empty home and an empty temp dir, and
 * without the test run's own log directory (tests/helpers/test-logs.ts), which would hide where the
 * demo's job logs go.
 */
function userEnv(): Record<string, string> {
  const env = {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
    HOME: home,
    TMPDIR: temp,
    npm_config_update_notifier: "false",
  } as Record<string, string>;
  delete env[LOG_DIR_ENV];
  return env;
}

/** What the demo (or its jobs' logs) left in the temp dir, under the names this extension and the demo use. */
function leftInTemp(): string[] {
  return readdirSync(temp).filter((name) => name.startsWith("pi-unified-exec-"));
}

async function demoJson(prompts: string[]): Promise<{ code: number | null; events: PiEvent[]; stderr: string }> {
  const child = spawn("npm", ["--silent", "run", "demo", "--", "--mode", "json", ...prompts], {
    cwd: REPO_ROOT,
    env: userEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  const events = stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as PiEvent);
  return { code, events, stderr };
}

describe("npm run demo in JSON mode", () => {
  it("walks through a wake, a dev server and a Python REPL, decided from the transcript, and cleans up", async () => {
    // "3" first: its job exits (after 3 s) while the dev server scene (at least 7 s) runs, so its wake
    // arrives within this one JSON run, as a follow-up after that scene.
    const run = await demoJson(["3", "1", "2", "4"]);
    assert.equal(run.code, 0, run.stderr);
    const calls = inCallOrder(runOf(run.events));
    for (const result of calls) assert.equal(result.isError, false, result.text);
    const said = run.events
      .filter((e) => e.type === "message_end" && e.message?.role === "assistant")
      .map((e) => textOf(e.message.content))
      .filter(Boolean);

    const [armed, server, check, poll, kill] = calls;
    assert.equal(headerOf(armed!.text).completion_notification?.startsWith("armed"), true, armed!.text);
    assert.match(outputOf(server!.text), /^Serving HTTP on 127\.0\.0\.1 port \d+/);
    assert.equal(outputOf(check!.text), "status 200\n");
    assert.match(outputOf(poll!.text), /"GET \/ HTTP\/1\.1" 200/, "the poll shows the request in the server's log");
    assert.equal(headerOf(kill!.text).cleanup, "confirmed");
    assert.ok(
      said.some((text) => /The check answered 200/.test(text)),
      said.join("\n"),
    );

    const wake = run.events.find((e) => e.type === "message_end" && e.message?.customType === "unified-exec-wake");
    assert.match(textOf(wake?.message.content ?? ""), /session 1 · exit_code 0/);
    const readAfterWake = calls.find((c) => c.name === "write_stdin" && c.args.session_id === 1);
    assert.match(readAfterWake?.text ?? "", /^\[exited\]\nexit_code: 0\n[\s\S]*---\nbuild finished\n$/);
    assert.ok(
      said.some((text) =>
        text.includes('Woken by the exit of session 1 (exit_code 0), without anyone polling; its last line: "build finished"'),
      ),
      said.join("\n"),
    );

    const repl = calls.slice(-5, -2);
    assert.deepEqual(
      repl.map((c) => c.name),
      ["exec_command", "write_stdin", "write_stdin"],
    );
    assert.match(outputOf(repl[1]!.text), /print\(6\*7\)\n42\n>>> $/);
    assert.equal(headerOf(repl[2]!.text).exit_code, "0");
    assert.ok(
      said.some((text) => /answered 42/.test(text)),
      said.join("\n"),
    );

    // Scene 4: the server returns at its ready line, names its address, and gets a wake on its errors.
    const [left, watch] = calls.slice(-2);
    assert.equal(headerOf(left!.text).wait_status, "matched", left!.text);
    assert.match(headerOf(left!.text).listening ?? "", /^127\.0\.0\.1:\d+$/, left!.text);
    assert.equal(watch!.name, "set_on_exit");
    assert.equal(headerOf(watch!.text).wake_on_pattern_status, "armed", watch!.text);
    assert.ok(
      said.some((text) => /keeps running, and I will be woken if it logs an error/.test(text)),
      said.join("\n"),
    );

    const demoRoot = dirname(String(armed!.structuredContent.cwd));
    assert.match(demoRoot, /pi-unified-exec-demo-/);
    assert.equal(dirname(demoRoot), realpathSync(temp), "the demo made its directory in the TMPDIR it was given");
    assert.ok(String(armed!.structuredContent.log_path).includes(`/${basename(demoRoot)}/logs/`), "the jobs' logs are in it");
    assert.equal(existsSync(demoRoot), false, "the demo's temporary agent and project dirs are removed");
    assert.deepEqual(leftInTemp(), [], "no log folder or demo folder stays in the temp dir");
    assert.deepEqual(
      readdirSync(home).filter((name) => name === ".pi"),
      [],
      "nothing was written to ~/.pi",
    );
  });

  it("answers any other prompt with the five it knows", async () => {
    const run = await demoJson(["hello"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      runOf(run.events).finalText,
      /knows five prompts\.\n\n1 · start a dev server[\s\S]*\n2 · [\s\S]*\n3 · [\s\S]*\n4 · [\s\S]*\n5 · /,
    );
  });
});

/** `npm run demo` in a real terminal, its scrollback read too. */
function startDemo(terminal: TmuxTerminal): void {
  const script = join(home, "demo.sh");
  const env = userEnv();
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      // The tmux server inherits this process's environment, the test run's log directory included.
      `unset ${LOG_DIR_ENV}`,
      `export PATH=${shellQuote(env.PATH!)} HOME=${shellQuote(home)} TMPDIR=${shellQuote(temp)} npm_config_update_notifier=false`,
      `cd ${shellQuote(REPO_ROOT)}`,
      "exec npm run demo",
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  terminal.open(home, script, { cols: 140, rows: 50, history: true });
}

describe("npm run demo in a terminal", () => {
  const terminal = new TmuxTerminal("demo");
  after(() => terminal.close());

  it("opens the Pi TUI with the prompts, answers 2, wakes by itself after 3, leaves a server for the picker in 4 whose error wakes with its line, asks for a passphrase in 5, shows the model's text at Ctrl+O, and removes its files and logs at Ctrl+D", async () => {
    startDemo(terminal);
    const intro = await terminal.waitForScreen(/type 1 to 5 and Enter[\s\S]*faux-1/, "the demo's prompts above the editor and Pi's footer");
    // The footer shows Pi's directory: the demo's project dir inside its temporary root.
    const root = /(\S*pi-unified-exec-demo-\w+)\/project/.exec(intro)?.[1];
    assert.ok(root && existsSync(join(root, "agent")), intro);

    terminal.type("2");
    await terminal.waitForScreen(/Python ran on a pseudo-terminal, answered 42/, "the REPL scene");

    terminal.type("3");
    await terminal.waitForScreen(/The job is running in the background/, "the wake scene's turn to end");
    await terminal.waitForScreen(/Woken by the exit of session \d+ \(exit_code 0\)/, "the wake to start a turn by itself");

    // Scene 4: a server left running; the picker lists it, and a request to /fail makes it log an error
    // that wakes the agent, the line quoted (nobody typed into the job).
    terminal.type("4");
    const left = await terminal.waitForScreen(
      /The dev server \(session (\d+)\) returned as soon as it printed its ready line and listens on 127\.0\.0\.1:(\d+)/,
      "the server scene",
    );
    const [, server, port] = /The dev server \(session (\d+)\)[^\n]*127\.0\.0\.1:(\d+)/.exec(left)!;
    terminal.type("/unified-exec-sessions");
    await terminal.waitForScreen(
      new RegExp(`${server} · running \\S+ · node server\\.mjs :${port} \\[wake /\\(\\?i\\)error/\\]`),
      "the picker's row with the port and the wake",
    );
    terminal.key("Escape");
    assert.equal((await fetch(`http://127.0.0.1:${port}/fail`)).status, 500);
    await terminal.waitForScreen(
      new RegExp(
        `Woken by session ${server}'s wake_on_pattern,\\s+without\\s+anyone\\s+polling:\\s+it\\s+logged\\s+"ERROR:\\s+the\\s+database`,
      ),
      "the pattern wake, quoting the line",
    );

    // Scene 5: the person types a passphrase into a job the model started; the model sees a count.
    terminal.type("5");
    await terminal.waitForScreen(/you are typing into the job · Ctrl\+\] returns to Pi[\s\S]*Passphrase:/, "the overlay");
    terminal.type("open sesame");
    await terminal.waitForScreen(/You typed into session \d+ \(12 bytes\); the job said "accepted"/, "the verdict, and the count");

    // Ctrl+O: every call's row shows the exact text the model read.
    terminal.key("C-o");
    const expanded = await terminal.waitForScreen(
      /the text the model read:\s*\n\s*\[(exited|still running)\]\n[\s\S]*user_input: 12 bytes/,
      "the model's text of the passphrase call",
    );
    assert.doesNotMatch(
      expanded.split("the text the model read:").slice(1).join(""),
      /open sesame\s*$/m,
      "the keys are not in what the model read",
    );

    terminal.key("C-d");
    await waitFor(() => !terminal.running(), "the demo to exit at Ctrl+D", 15_000, 100);
    assert.equal(existsSync(root), false, "the demo's temporary dir is removed");
    assert.deepEqual(leftInTemp(), [], "no log folder or demo folder stays in the temp dir");
  });
});
