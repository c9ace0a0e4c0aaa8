import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Root of this checkout. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The extension entry point, as `pi -e` loads it. */
export const EXTENSION_ENTRY = join(REPO_ROOT, "src", "index.ts");

/** A Pi CLI installed as a dev dependency, used as a real host. */
export interface PiHost {
  /** Short label for test names, e.g. "pi 1.4.0". */
  name: string;
  version: string;
  /** The npm bin (`dist/bundle/cli.js`): the same bundled CLI users run. */
  cliPath: string;
}

function installedHost(packageDir: string): PiHost {
  const root = join(REPO_ROOT, "node_modules", packageDir);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; bin: { pi: string } };
  return { name: `pi ${manifest.version}`, version: manifest.version, cliPath: join(root, manifest.bin.pi) };
}

/** The oldest supported host (1.4.0) and the newest 1.x, installed through an npm alias. */
export const PI_HOSTS: readonly PiHost[] = [installedHost("@earendil-works/pi-coding-agent"), installedHost("pi-coding-agent-latest")];

/**
 * The newest host, for tests of behaviour that does not depend on the host: only what Pi itself
 * does (its events, delivery, the UI, reload, the TUI, installing) runs on every host.
 */
export const NEWEST_HOST: PiHost = PI_HOSTS.at(-1)!;

/** The newest host as a list, for a file written as a loop over hosts that needs only one. */
export const NEWEST_HOST_ONLY: readonly PiHost[] = [NEWEST_HOST];
