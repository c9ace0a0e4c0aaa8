/**
 * `npm start`: the newest Pi in devDependencies (the `pi-coding-agent-latest` alias), interactive,
 * with this checkout loaded as an extension, in the directory `npm start` was run from. Before Pi
 * starts, and only when Pi itself reports that no model is available, it says in two lines how to
 * give Pi one; when Pi is about to take the terminal over, it then waits for Enter, so the hint is
 * read before Pi's screen covers it. Arguments after `npm start --` go to Pi. Runs after
 * scripts/preflight.cjs, so it may use any syntax Node 22 has.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readSync } from "node:fs";
import { constants, homedir } from "node:os";
import { dirname, join } from "node:path";
import { isatty } from "node:tty";
import { fileURLToPath } from "node:url";

const checkout = join(dirname(fileURLToPath(import.meta.url)), "..");
const hostDir = join(checkout, "node_modules", "pi-coding-agent-latest");

if (!existsSync(join(hostDir, "package.json"))) {
  console.error("The newest Pi (devDependency pi-coding-agent-latest) is not installed here: run `npm install` in this checkout first.");
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(join(hostDir, "package.json"), "utf8"));
const cli = join(hostDir, manifest.bin.pi);

// npm runs scripts in the package's directory; INIT_CWD is where the user typed `npm start`.
const cwd = process.env.INIT_CWD || process.cwd();

/**
 * Asks Pi which models it can use (offline, so nothing is downloaded): the same answer Pi gives at
 * startup, including providers from the user's own extensions. Any doubt counts as "configured", so
 * the hint never appears for someone whose setup works.
 */
function noModelConfigured() {
  const check = spawnSync(process.execPath, [cli, "--offline", "--list-models"], {
    cwd,
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, PI_SKIP_VERSION_CHECK: "1" },
  });
  return check.status === 0 && /^No models available/m.test(check.stdout ?? "");
}

/**
 * Whether Pi will draw its full-screen UI: both ends are a terminal and no argument asks for a run
 * that prints and exits (`-p`, `--mode json|rpc`, `--version`, `--help`, `--list-models`, `--export`).
 */
function piTakesTheTerminal(args) {
  // isatty, not process.stdin.isTTY: process.stdin would open a stream on the terminal Pi is to read.
  if (!isatty(0) || !isatty(1)) return false;
  const printsAndExits = new Set(["-p", "--print", "-v", "--version", "-h", "--help", "--list-models", "--export"]);
  return !args.some((arg, i) => printsAndExits.has(arg) || (arg === "--mode" && ["json", "rpc"].includes(args[i + 1])));
}

/**
 * Blocks until a line (Enter) or end of input arrives on the terminal. A plain read of fd 0 opens no
 * stream, so nothing of this process is left reading the keys Pi gets next.
 */
function waitForEnter() {
  const buffer = Buffer.alloc(256);
  for (;;) {
    let count;
    try {
      count = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      if (error.code !== "EAGAIN") return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); // a terminal left non-blocking: try again shortly
      continue;
    }
    if (count === 0 || buffer.subarray(0, count).includes(0x0a)) return;
  }
}

const piArgs = process.argv.slice(2);

if (noModelConfigured()) {
  const agentDir = process.env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
  console.log(
    `No model is configured for Pi yet: type /login in Pi to sign in or enter an API key (kept in ${join(agentDir, "auth.json")}),\n` +
      "or set a provider's key before `npm start` (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY); `npm run demo` needs neither.\n",
  );
  // Pi's screen would cover the hint at once: let it be read first.
  if (piTakesTheTerminal(piArgs)) {
    process.stdout.write("Press Enter to start Pi (Ctrl+C stops here).");
    waitForEnter();
  }
}

const pi = spawn(process.execPath, [cli, "-e", checkout, ...piArgs], { cwd, stdio: "inherit" });
// Ctrl+C belongs to Pi (the terminal sends it to the whole foreground group); this wrapper only
// passes on the signals a terminal or supervisor sends to it alone.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => pi.kill(signal));
pi.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
