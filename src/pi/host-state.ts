import type { ExecRuntime } from "../core/runtime.ts";

/**
 * State that outlives the extension module. `/reload` re-evaluates this module in the same process,
 * so module variables start over; `globalThis` does not. Runtimes are kept here, keyed by Pi's
 * `SessionManager` object (the same object across a reload, a different one for another session or
 * SDK session), so a reload can hand jobs to the next instance and sessions never see each other's.
 */

/**
 * Stamp of what a parked runtime looks like to the next instance. A build that changes how it talks
 * to a runtime bumps it; a newer build then refuses an older runtime (its jobs are stopped) rather
 * than drive it through an interface it does not have.
 */
export const RUNTIME_FORMAT = 2;

export interface HostedRuntime {
  format: number;
  runtime: ExecRuntime;
  /** Set while parked by `/reload`, until adopted or given up. */
  parked?: { timer: NodeJS.Timeout };
}

export interface HostState {
  runtimes: WeakMap<object, HostedRuntime>;
  /**
   * Process groups a session boundary could not stop. While any is alive, new commands are refused:
   * starting more work beside children we lost control of would only compound the problem.
   */
  unstopped: Set<number>;
}

const KEY = Symbol.for("pi-unified-exec/host-state");

export function hostState(): HostState {
  const holder = globalThis as { [KEY]?: HostState };
  holder[KEY] ??= { runtimes: new WeakMap(), unstopped: new Set() };
  return holder[KEY];
}
