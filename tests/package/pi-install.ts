/** `pi install` with a host's real CLI into a test's isolated agent dir, as a user runs it. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { PiDirs } from "../helpers/pi-process.ts";

/**
 * Runs `pi install <spec>` and returns what it printed. `npmCache` is shared by the tests of one
 * file, so a package fetched from the registry (the PTY module) is downloaded once, not per host.
 */
export function piInstall(cliPath: string, dirs: PiDirs, spec: string, npmCache: string): string {
  return piPackageCommand(cliPath, dirs, ["install", spec], npmCache);
}

/** `pi remove <spec>`, as the README tells a user to take a package out again. */
export function piRemove(cliPath: string, dirs: PiDirs, spec: string): string {
  return piPackageCommand(cliPath, dirs, ["remove", spec], join(dirs.root, "npm-cache"));
}

function piPackageCommand(cliPath: string, dirs: PiDirs, args: string[], npmCache: string): string {
  return execFileSync(process.execPath, [cliPath, ...args], {
    cwd: dirs.cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      HOME: dirs.home,
      PI_CODING_AGENT_DIR: dirs.agentDir,
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      npm_config_cache: npmCache,
      npm_config_update_notifier: "false",
    },
  });
}

/** The `packages` a user-scope install recorded in the agent dir's settings.json. */
export function installedPackages(dirs: PiDirs): unknown[] {
  return (JSON.parse(readFileSync(join(dirs.agentDir, "settings.json"), "utf8")) as { packages?: unknown[] }).packages ?? [];
}
