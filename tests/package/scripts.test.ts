/**
 * The checkout's own commands: the Node-version preflight in front of `npm test`, `npm start` and
 * `npm run demo` (one sentence and exit 1 on an old Node, silence on this one), and `npm start`
 * running the newest Pi with this checkout, saying how to log in only when Pi has no model; in a
 * terminal (tmux) that hint waits for Enter, so Pi's screen does not cover it before it is read.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { accessSync, chmodSync, constants, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { basename, delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type PiEvent, runOf } from "../helpers/events.ts";
import { PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { FAUX_EXTENSION, makeDirs, type PiDirs } from "../helpers/pi-process.ts";
import { quietFor, waitFor } from "../helpers/processes.ts";
import { call, ScriptedModel, say, steps } from "../helpers/scripted-model.ts";
import { shellQuote, TmuxTerminal } from "../helpers/tmux.ts";

const PREFLIGHT = join(REPO_ROOT, "scripts", "preflight.cjs");
/** The one sentence: the Node it needs, and the README's two lines that install Node 22 and put it on PATH. */
const refusal = (version: string) =>
  `Node ${version} is too old for pi-unified-exec, which needs Node 22.19 or newer: switch to one, or install Node 22 for this project with ` +
  '`npm install --prefix "$HOME/.cache/pi-unified-exec/node22" node@22` and put it first on PATH with ' +
  '`export PATH="$HOME/.cache/pi-unified-exec/node22/node_modules/node/bin:$PATH"`.';

function preflight(node: string, ...args: string[]) {
  return spawnSync(node, [PREFLIGHT, ...args], { encoding: "utf8" });
}

/** A `node` on PATH older than 22.19 (Debian's default Node 20, for one), or undefined. */
function findOldNode(): { path: string; version: string } | undefined {
  const ours = realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "node");
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) === ours) continue;
    } catch {
      continue;
    }
    const version = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.trim() ?? "";
    const [major = 0, minor = 0] = version.split(".").map(Number);
    if (version && (major < 22 || (major === 22 && minor < 19))) return { path: candidate, version };
  }
  return undefined;
}

describe("the Node-version preflight", () => {
  it("refuses an older Node given with --node-version in one sentence naming 22.19 and how to install Node 22, with exit 1", () => {
    for (const version of ["16.20.2", "20.11.1", "22.18.0", "v22.18.9"]) {
      const result = preflight(process.execPath, "--node-version", version);
      assert.equal(result.status, 1, version);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr, `${refusal(version.replace(/^v/, ""))}\n`);
    }
  });

  it("passes 22.19.0 and newer given with --node-version, silently", () => {
    for (const version of ["22.19.0", "22.23.3", "24.0.0", "100.0.0"]) {
      const result = preflight(process.execPath, "--node-version", version);
      assert.deepEqual([result.status, result.stdout, result.stderr], [0, "", ""], version);
    }
  });

  it("passes silently on the Node running these tests", () => {
    const result = preflight(process.execPath);
    assert.deepEqual([result.status, result.stdout, result.stderr], [0, "", ""]);
  });

  it("says what it expected when --node-version is not a version, with exit 2", () => {
    const result = preflight(process.execPath, "--node-version", "latest");
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--node-version needs a version such as 20\.11\.1, got "latest"/);
  });

  it("runs first in npm test, npm start and npm run demo", () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    for (const name of ["test", "start", "demo"]) assert.match(scripts[name] ?? "", /^node scripts\/preflight\.cjs && /, name);
  });

  const old = findOldNode();
  it(
    `stops npm test, npm start and npm run demo on a real older Node with the sentence (${old ? `Node ${old.version} at ${old.path}` : "skipped: no Node older than 22.19 on PATH"})`,
    { skip: old ? false : "no Node older than 22.19 on PATH" },
    () => {
      const env = { ...process.env, PATH: `${dirname(old!.path)}${delimiter}${process.env.PATH}`, npm_config_update_notifier: "false" };
      assert.equal(preflight(old!.path).stderr, `${refusal(old!.version)}\n`, "the script itself parses and runs there");
      for (const script of [["test"], ["start"], ["run", "demo"]]) {
        const result = spawnSync("npm", ["--silent", ...script], { cwd: REPO_ROOT, env, encoding: "utf8", timeout: 60_000 });
        assert.equal(result.status, 1, `npm ${script.join(" ")}: ${result.stdout}${result.stderr}`);
        assert.ok(result.stderr.includes(refusal(old!.version)), `npm ${script.join(" ")}: ${result.stderr}`);
      }
    },
  );
});

describe("npm start", () => {
  const newest = PI_HOSTS.at(-1)!;
  let dirs: PiDirs;
  let model: ScriptedModel;
  before(async () => {
    dirs = makeDirs();
    model = await ScriptedModel.start();
  });
  after(async () => {
    await model.close();
    rmSync(dirs.root, { recursive: true, force: true });
  });

  /**
   * `npm start -- <args>` from the test's own directory, with an environment built from scratch, so
   * no provider key of the machine running the tests can make a model available. Asynchronous: the
   * scripted model answers from this process.
   */
  async function npmStart(args: string[], extraEnv: Record<string, string> = {}) {
    const env = {
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
      HOME: dirs.home,
      PI_CODING_AGENT_DIR: dirs.agentDir,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      npm_config_update_notifier: "false",
      ...extraEnv,
    };
    const child = spawn("npm", ["--silent", "--prefix", REPO_ROOT, "start", "--", ...args], {
      cwd: dirs.cwd,
      env,
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
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(timer);
    return { status, stdout, stderr };
  }

  it(`runs the newest Pi (${newest.version}) and, with no model configured, first says how to log in`, async () => {
    const result = await npmStart(["--version"]);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split("\n");
    assert.equal(lines.at(-1), newest.version);
    assert.match(lines[0]!, /^No model is configured for Pi yet: type \/login in Pi to sign in or enter an API key/);
    assert.ok(lines[0]!.includes(join(dirs.agentDir, "auth.json")), "names the agent dir's auth.json");
    assert.match(lines[1]!, /ANTHROPIC_API_KEY or OPENAI_API_KEY\); `npm run demo` needs neither\.$/);
  });

  it("says nothing about logging in when a provider key is set", async () => {
    const result = await npmStart(["--version"], { OPENAI_API_KEY: "sk-not-a-real-key" });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), newest.version);
  });

  it("loads this checkout's tools and runs jobs in the directory npm start was typed in", async () => {
    model.script = steps(call("exec_command", { cmd: "pwd" }), say("done"));
    const result = await npmStart(["-e", FAUX_EXTENSION, "--provider", "faux", "--model", "faux-1", "--mode", "json", "where am I?"], {
      PIUE_TEST_MODEL_URL: model.url,
    });
    assert.equal(result.status, 0, result.stderr);
    const events = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as PiEvent);
    const [exec] = runOf(events).tools;
    assert.equal(exec?.isError, false, exec?.text ?? result.stderr);
    assert.match(exec!.text, new RegExp(`---\\n${dirs.cwd.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n$`));
  });
});

/** `npm start` in a real terminal, run from `dirs.cwd` with an environment built from scratch (no provider key). */
function startNpmStart(terminal: TmuxTerminal, dirs: PiDirs): void {
  const env: Record<string, string> = {
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
    HOME: dirs.home,
    PI_CODING_AGENT_DIR: dirs.agentDir,
    PI_UNIFIED_EXEC_LOG_DIR: dirs.logs,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    TERM: "xterm-256color",
    npm_config_update_notifier: "false",
  };
  const script = join(dirs.root, "start.sh");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      `exec env -i ${Object.entries(env)
        .map(([key, value]) => `${key}=${shellQuote(value)}`)
        .join(" ")} sh -c ${shellQuote(`cd ${shellQuote(dirs.cwd)} && exec npm --silent --prefix ${shellQuote(REPO_ROOT)} start`)}`,
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  terminal.open(dirs.root, script, { cols: 160, rows: 40 });
}

describe("npm start in a terminal", () => {
  const terminal = new TmuxTerminal("start");
  let dirs: PiDirs;
  before(() => {
    dirs = makeDirs();
  });
  after(() => {
    terminal.close();
    rmSync(dirs.root, { recursive: true, force: true });
  });

  it("shows the no-model hint until Enter, then starts Pi with the checkout listed under its folder's name, not src", async () => {
    startNpmStart(terminal, dirs);
    const hint = await terminal.waitForScreen(/Press Enter to start Pi \(Ctrl\+C stops here\)\./, "the hint and its Enter prompt");
    assert.match(hint, /No model is configured for Pi yet: type \/login in Pi/);
    assert.match(hint, /`npm run demo` needs neither\./);
    // Without the wait, Pi would have drawn its screen over the hint within this span.
    await quietFor(2_000, () => {
      const screen = terminal.screen();
      assert.match(screen, /No model is configured for Pi yet/, `the hint stays until Enter:\n${screen}`);
      assert.doesNotMatch(screen, /\[Extensions\]/, `Pi has not started:\n${screen}`);
    });

    terminal.key("Enter");
    const pi = await terminal.waitForScreen(/\[Extensions\]\n\s*\S+/, "Pi's startup screen listing the extensions");
    const listed = /\[Extensions\]\n\s*(.+)/.exec(pi)![1]!.trim();
    assert.equal(listed, basename(REPO_ROOT), "the checkout is named after its folder (pi-unified-exec in a fresh clone)");

    terminal.key("C-d");
    await waitFor(() => !terminal.running(), "npm start to end when Pi quits at Ctrl+D", 15_000, 100);
  });
});
