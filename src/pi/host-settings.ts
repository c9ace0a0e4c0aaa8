import { homedir } from "node:os";
import { join } from "node:path";
import { type ExtensionAPI, getAgentDir } from "@earendil-works/pi-coding-agent";
import type { HostShellSettings } from "../core/index.ts";

/** `~/x` as Pi's settings allow it. */
function expandHome(path: string | undefined): string | undefined {
  if (!path) return undefined;
  if (path === "~") return homedir();
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/**
 * What jobs take from Pi, as its own bash tool does: the `shellPath` and `shellCommandPrefix`
 * settings (global or project) and `<agentDir>/bin` on PATH. Read at each call, so a changed setting
 * applies to the next command; `getSettings` cannot be called while the extension loads.
 */
export function hostShellSettings(pi: ExtensionAPI): HostShellSettings {
  const settings = pi.getSettings();
  const bashPath = expandHome(settings.shellPath);
  return {
    ...(bashPath ? { bashPath } : {}),
    ...(settings.shellCommandPrefix ? { commandPrefix: settings.shellCommandPrefix } : {}),
    binDir: join(getAgentDir(), "bin"),
  };
}
