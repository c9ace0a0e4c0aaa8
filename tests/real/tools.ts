/**
 * The real tools the real-tools tier drives (`npm run test:real`): pinned versions installed from the
 * npm registry once into a cache directory, reused while the pins stay the same. Where the registry
 * cannot be reached, the tier is skipped and says so; any other install failure fails it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Exact versions: a dev server, a test watcher, a spinner-drawing library. */
export const PINNED = { vite: "8.4.1", vitest: "5.1.2", ora: "10.0.0" } as const;

/** A small package `npm install` fetches in the spinner test (nothing depends on it). */
export const NPM_FETCHED = "is-number@7.0.0";

/** Where the tools are cached (`PI_UNIFIED_EXEC_REAL_TOOLS_DIR` moves it). */
const CACHE = process.env.PI_UNIFIED_EXEC_REAL_TOOLS_DIR ?? join(homedir(), ".cache", "pi-unified-exec", "real-tools");

/** An npm failure that says the registry is out of reach, not that the install is wrong. */
const UNREACHABLE = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|socket hang up|network|E5\d\d/i;

/** The skip of a tier whose registry cannot be reached, with npm's line that says why. */
function unreachable(said: string): { skip: string } {
  const why = said.split("\n").find((line) => UNREACHABLE.test(line)) ?? said.trim().split("\n")[0];
  return { skip: `the npm registry cannot be reached (${why?.trim()})` };
}

export interface RealTools {
  /** The installed tools' directory (its `node_modules` resolves `ora` for a script placed there). */
  dir: string;
  /** The absolute path of a tool's executable. */
  bin(name: "vite" | "vitest"): string;
}

/** The tools, installed now if the cache does not have these pins, or why the tier is skipped. */
export function realTools(): { tools: RealTools; skip?: undefined } | { tools?: undefined; skip: string } {
  const key = Object.entries(PINNED)
    .map(([name, version]) => `${name}-${version}`)
    .join("_");
  const dir = join(CACHE, key);
  const marker = join(dir, "installed.json");
  // The spinner test fetches from the registry whatever the cache holds: ask it first.
  const asked = spawnSync("npm", ["view", NPM_FETCHED, "version", "--fetch-retries=1", "--fetch-timeout=20000"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (asked.status !== 0) {
    const said = `${asked.stderr ?? ""}${asked.error?.message ?? ""}`;
    if (UNREACHABLE.test(said) || asked.error) return unreachable(said);
    throw new Error(`npm view ${NPM_FETCHED} failed (${asked.status}):\n${said}`);
  }
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== JSON.stringify(PINNED)) {
    // Installed beside, then moved in whole: an interrupted install never looks complete.
    const staging = `${dir}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, "package.json"), JSON.stringify({ name: "real-tools", private: true, type: "module" }));
    const specs = Object.entries(PINNED).map(([name, version]) => `${name}@${version}`);
    const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--save-exact", ...specs], {
      cwd: staging,
      encoding: "utf8",
      timeout: 300_000,
    });
    if (install.status !== 0) {
      rmSync(staging, { recursive: true, force: true });
      const said = `${install.stderr ?? ""}${install.error?.message ?? ""}`;
      if (UNREACHABLE.test(said) || install.error) return unreachable(said);
      throw new Error(`npm install ${specs.join(" ")} failed (${install.status}):\n${said}`);
    }
    writeFileSync(join(staging, "installed.json"), JSON.stringify(PINNED));
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  }
  return { tools: { dir, bin: (name) => join(dir, "node_modules", ".bin", name) } };
}

/** Variables by which tools tell a CI machine (ci-info, is-interactive): ora and npm draw no spinner where they see one. */
const CI_VARIABLES = [
  "CI",
  "CONTINUOUS_INTEGRATION",
  "BUILD_ID",
  "BUILD_NUMBER",
  "RUN_ID",
  "GITHUB_ACTIONS",
  "GITLAB_CI",
  "BUILDKITE",
  "CIRCLECI",
  "TRAVIS",
  "JENKINS_URL",
  "TF_BUILD",
];

/** A shell prefix that runs a command as on a developer's machine: no CI variables, a UTF-8 locale (npm's spinner is ASCII otherwise). */
export const DEVELOPER_ENV = `env ${CI_VARIABLES.map((name) => `-u ${name}`).join(" ")} LANG=C.UTF-8`;

/** Processes whose command line or working directory is under `dir` (Linux; none elsewhere): what a test left running there. */
export function processesUnder(dir: string): string[] {
  if (process.platform !== "linux") return [];
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (args.includes(dir) || readlinkSync(`/proc/${entry}/cwd`).startsWith(dir)) found.push(`${entry} ${args}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
