/**
 * `npm run demo`: the real Pi TUI (the newest Pi in devDependencies) with this checkout loaded and
 * the scripted model of tour-model.ts, fully offline. Everything the demo leaves lives in one temporary
 * directory, removed when Pi exits: Pi's agent directory (never ~/.pi), the project the jobs run in,
 * and the jobs' logs (PI_UNIFIED_EXEC_LOG_DIR, so no log folder stays behind in the system's temp dir).
 * Arguments after `npm run demo --` go to Pi (the tests use `--mode json 3 1 2`). What to type is shown
 * inside the TUI, above the editor (tour-model.ts): Pi clears the terminal when it starts, so
 * anything printed here first would be gone.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const checkout = fileURLToPath(new URL("../..", import.meta.url));
const model = fileURLToPath(new URL("./tour-model.ts", import.meta.url));
const hostDir = join(checkout, "node_modules", "pi-coding-agent-latest");

if (!existsSync(join(hostDir, "package.json"))) {
  console.error("The newest Pi (devDependency pi-coding-agent-latest) is not installed here: run `npm install` in this checkout first.");
  process.exit(1);
}
const cli = join(hostDir, (JSON.parse(readFileSync(join(hostDir, "package.json"), "utf8")) as { bin: { pi: string } }).bin.pi);
const args = process.argv.slice(2);

const root = mkdtempSync(join(tmpdir(), "pi-unified-exec-demo-"));
const agentDir = join(root, "agent");
const project = join(root, "project");
const logs = join(root, "logs");
mkdirSync(agentDir);
mkdirSync(project);
mkdirSync(logs);
// Something for the dev server of scene 1 to serve, and scene 4's dev server.
writeFileSync(join(project, "index.html"), "<h1>served by the pi-unified-exec demo</h1>\n");
copyFileSync(fileURLToPath(new URL("./dev-server.mjs", import.meta.url)), join(project, "server.mjs"));

const pi = spawn(
  process.execPath,
  [cli, "-ne", "--no-session", "-e", model, "-e", checkout, "--provider", "faux", "--model", "faux-1", ...args],
  {
    cwd: project,
    stdio: "inherit",
    env: {
      ...process.env,
      PI_CODING_AGENT_DIR: agentDir,
      PI_UNIFIED_EXEC_LOG_DIR: logs,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
    },
  },
);
// Ctrl+C belongs to Pi (the terminal sends it to the whole foreground group).
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, () => pi.kill(signal));
pi.on("exit", (code, signal) => {
  rmSync(root, { recursive: true, force: true });
  process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
});
