import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import type * as NodePty from "@homebridge/node-pty-prebuilt-multiarch";
import { PTY_MODULE_ENV } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import { type NativePty, UnixPtyTransport } from "./pty-unix.ts";
import { WindowsPtyTransport } from "./pty-windows.ts";
import type { PtySpawnSpec, Transport, TransportEvents } from "./types.ts";

type PtyModule = typeof NodePty & { native?: NativePty | null };

/** The optional native module behind `tty: true` (`PI_UNIFIED_EXEC_PTY_MODULE` may name a compatible one). */
const PTY_MODULE = "@homebridge/node-pty-prebuilt-multiarch";

/** The PTY module, loaded once per name, with where its macOS spawn helper lives. */
export interface LoadedPty {
  module: PtyModule;
  helperPath: string;
}

const requireFromHere = createRequire(import.meta.url);
const loadedModules = new Map<string, LoadedPty>();

function unloadable(name: string, why: string): ExecRequestError {
  return new ExecRequestError(
    `tty: true needs the PTY module ${name}, which could not be loaded: ${why}. ` +
      "Nothing was started; pipes (tty: false) still work. To fix it, reinstall pi-unified-exec with its optional " +
      "dependencies (npm's --omit=optional or --no-optional skips them) on Linux, macOS or Windows, where the module ships prebuilt binaries.",
  );
}

/** Loads the optional native module on the first `tty: true`, or refuses saying why and how to fix it (pipes keep working). */
export function loadPtyModule(env: NodeJS.ProcessEnv = process.env): LoadedPty {
  const name = env[PTY_MODULE_ENV] || PTY_MODULE;
  const cached = loadedModules.get(name);
  if (cached) return cached;
  let loaded: LoadedPty;
  try {
    const main = requireFromHere.resolve(name);
    // node-pty's own terminal uses the same path for the helper macOS spawns children through.
    loaded = { module: requireFromHere(name) as PtyModule, helperPath: resolve(dirname(main), "..", "build", "Release", "spawn-helper") };
  } catch (error) {
    throw unloadable(name, (error as Error).message.split("\n")[0] ?? "unknown error");
  }
  if (process.platform !== "win32" && typeof loaded.module.native?.fork !== "function") {
    throw unloadable(name, "it has no native fork (a node-pty build exposing `native` is required on Linux and macOS)");
  }
  loadedModules.set(name, loaded);
  return loaded;
}

/** The shell leads its own session with the PTY as its controlling terminal: REPLs, prompts and TUIs work. */
export function spawnPty(spec: PtySpawnSpec, events: TransportEvents, pty: LoadedPty): Transport {
  if (process.platform === "win32") return new WindowsPtyTransport(spec, events, pty.module);
  return new UnixPtyTransport(spec, events, pty.module.native!, pty.helperPath);
}
