import type { ExecRuntime, Job } from "../core/index.ts";

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
// 2: runtimes take an id source, hand over and inherit unread jobs, tell user kills apart, give the
// startup sweep's notice (`takeNotice`), keep exactly-once completion in `completions` (a
// CompletionLedger the Pi layer binds and reports calls to), and take a `WriteRequest` in `interact`.
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
  /**
   * The next job id of this Pi process. Every runtime draws from it, so an id never names two jobs in
   * one process: a session that outlives its runtime (an in-memory `/fork`, a runtime given up after
   * `/reload`) or a forked conversation that still holds old ids never reaches a newer job with them.
   */
  nextId: number;
  /** Finished, unread jobs of a session's ended runtime, for its next runtime to answer once by id. */
  handovers: WeakMap<object, Job[]>;
  /** Set by a `fork` boundary until the forked session starts: whose jobs, and the new session's file. */
  pendingFork?: { manager: object; sessionFile: string | undefined; jobs: Job[] };
}

const KEY = Symbol.for("pi-unified-exec/host-state");

export function hostState(): HostState {
  const holder = globalThis as { [KEY]?: HostState };
  holder[KEY] ??= { runtimes: new WeakMap(), unstopped: new Set(), nextId: 1, handovers: new WeakMap() };
  const state = holder[KEY];
  // A state made by an earlier build in this process may lack the newer fields.
  state.nextId ??= 1;
  state.handovers ??= new WeakMap();
  return state;
}
