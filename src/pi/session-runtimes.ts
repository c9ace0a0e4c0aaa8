/*
 * The session's runtime across `/reload`: created on the first tool call (activation starts nothing),
 * parked at `/reload` and adopted by the next extension instance (`globalThis` survives the module's
 * re-evaluation; runtimes are keyed by Pi's `SessionManager` object), stopped at a session boundary.
 * Where a conversation outlives its runtime (a fork, a runtime given up), the next one answers each old id once.
 */
import {
  aliveGroups,
  ExecRequestError,
  ExecRuntime,
  holdSignalsWhile,
  type Job,
  MAX_JOBS,
  RELOAD_ADOPTION_MS,
  type ShutdownReport,
  type WakeBatch,
  type WakeSender,
} from "../core/index.ts";

/**
 * Stamp of how a build talks to a parked runtime: a build that changes it bumps it, and a newer build
 * refuses an older runtime (its jobs are stopped) rather than drive it through an interface it lacks.
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
  /** Process groups a session boundary could not stop: while any lives, new commands are refused. */
  unstopped: Set<number>;
  /** The next job id of this Pi process: every runtime draws from it, so an old id never reaches a newer job. */
  nextId: number;
  /** Finished, unread jobs of a session's ended runtime, for its next runtime to answer once by id. */
  handovers: WeakMap<object, Job[]>;
  /** Set by a `fork` boundary until the forked session starts: whose jobs, and the new session's file. */
  pendingFork?: { manager: object; sessionFile: string | undefined; jobs: Job[] };
}

const KEY = Symbol.for("pi-unified-exec/host-state");

function hostState(): HostState {
  const holder = globalThis as { [KEY]?: HostState };
  holder[KEY] ??= { runtimes: new WeakMap(), unstopped: new Set(), nextId: 1, handovers: new WeakMap() };
  const state = holder[KEY];
  // A state made by an earlier build in this process may lack the newer fields.
  state.nextId ??= 1;
  state.handovers ??= new WeakMap();
  return state;
}

/** Jobs a runtime hands to the session's next one: one registry's worth, all the ended one could hold. */
const HANDOVER_MAX_JOBS = MAX_JOBS;

/** What adopting a parked runtime after `/reload` came to. */
export type Adoption = { adopted: ExecRuntime } | { refused: ExecRuntime; format: number } | undefined;

/** What a session boundary is, as `session_shutdown` tells it. */
export interface Boundary {
  reason: string;
  /** The session that replaces this one (for a fork: the forked session's file). */
  targetSessionFile?: string | undefined;
}

/**
 * This extension instance's view of the runtimes: wakes and the UI are bound per instance (the old
 * instance's `pi` and `ctx` throw once Pi replaced them).
 */
export class SessionRuntimes {
  private manager: object | undefined;
  private sender: WakeSender | undefined;
  /** Pi runs an agent run now (from its run events): wakes are held until it settles. */
  private running = false;
  private readonly created = new Set<(runtime: ExecRuntime) => void>();

  constructor(
    private readonly state: HostState = hostState(),
    private readonly adoptionMs: number = RELOAD_ADOPTION_MS,
  ) {}

  /** The session this instance serves (from `session_start`), with its wake delivery. */
  bind(manager: object, sender: WakeSender): void {
    this.manager = manager;
    this.sender = sender;
    const runtime = this.existing(manager);
    if (runtime) this.connect(runtime);
  }

  /**
   * Pi's run, as its events say (`running`: a run started; false: it settled or Pi is idle). Every
   * runtime of this instance follows it, one created or adopted later included: while a run lasts
   * its wakes are held, and when it settles they are decided (the completion ledger's one
   * decision point).
   */
  setRunning(running: boolean): void {
    this.running = running;
    const runtime = this.existing();
    if (running) runtime?.completions.runStarted();
    else runtime?.completions.runSettled();
  }

  /** A run is starting (`before_agent_start`): the notices still due that ride with it, if any; then as `setRunning(true)`. */
  runStarting(): WakeBatch | undefined {
    this.running = true;
    return this.existing()?.completions.takeForTurn();
  }

  /** Runs `listener` for the bound session's runtime when it is created or adopted. */
  onRuntime(listener: (runtime: ExecRuntime) => void): void {
    this.created.add(listener);
  }

  /** The runtime of `manager`'s session, created on first use. */
  runtimeFor(manager: object): ExecRuntime {
    const hosted = this.state.runtimes.get(manager);
    if (hosted && !hosted.parked) return hosted.runtime;
    // A parked runtime is never replaced (its jobs would be lost): it is adopted, or refused and stopped.
    const adoption = hosted?.parked ? this.adopt(manager) : undefined;
    if (adoption && "adopted" in adoption) {
      if (manager === this.manager) this.connect(adoption.adopted);
      return adoption.adopted;
    }
    if (adoption) void adoption.refused.shutdown();
    const runtime = new ExecRuntime({ ids: () => this.state.nextId++ });
    runtime.inherit(this.takeHandover(manager));
    this.state.runtimes.set(manager, { format: RUNTIME_FORMAT, runtime });
    if (manager === this.manager) this.connect(runtime);
    return runtime;
  }

  /** The runtime of `manager`'s session if it has one (events must not create one). */
  existing(manager: object | undefined = this.manager): ExecRuntime | undefined {
    const hosted = manager && this.state.runtimes.get(manager);
    return hosted && !hosted.parked ? hosted.runtime : undefined;
  }

  /** `/reload`: the runtime runs on without delivery for the next instance to adopt; not adopted in time, it stops its jobs. */
  park(manager: object): void {
    const hosted = this.state.runtimes.get(manager);
    if (!hosted || hosted.parked) return;
    hosted.runtime.completions.bindSender(undefined);
    const timer = setTimeout(() => {
      if (this.state.runtimes.get(manager) !== hosted) return;
      this.state.runtimes.delete(manager);
      // The conversation goes on with this SessionManager: its next runtime answers the stopped ids.
      void hosted.runtime
        .shutdown()
        .then(() => hosted.runtime.handover())
        .then((jobs) => this.addHandover(manager, jobs));
    }, this.adoptionMs);
    timer.unref();
    hosted.parked = { timer };
  }

  /** `session_start` after `/reload`: takes over the parked runtime, or refuses one stamped by another build. */
  adopt(manager: object): Adoption {
    const hosted = this.state.runtimes.get(manager);
    if (!hosted?.parked) return undefined;
    clearTimeout(hosted.parked.timer);
    if (hosted.format !== RUNTIME_FORMAT) {
      this.state.runtimes.delete(manager);
      return { refused: hosted.runtime, format: hosted.format };
    }
    hosted.parked = undefined;
    return { adopted: hosted.runtime };
  }

  /**
   * A session boundary (`new`, `resume`, `fork`, `quit`): the jobs are stopped and the runtime
   * forgotten; groups that could not be stopped block new commands until gone. Only a fork keeps the
   * conversation and its ids: its unread jobs wait for the forked session (`forked`).
   */
  async end(manager: object, boundary?: Boundary): Promise<ShutdownReport | undefined> {
    const hosted = this.state.runtimes.get(manager);
    if (!hosted) return undefined;
    this.state.runtimes.delete(manager);
    if (hosted.parked) clearTimeout(hosted.parked.timer);
    // A fork whose session never started leaves nothing behind for the next boundary.
    this.state.pendingFork = undefined;
    // A SIGTERM or SIGHUP to Pi meanwhile must not cut the jobs' grace short.
    const report = await holdSignalsWhile(() => hosted.runtime.shutdown());
    for (const pgid of report.survivors) this.state.unstopped.add(pgid);
    // A runtime of another build is stopped but not asked for its jobs: its interface may differ.
    if (boundary?.reason === "fork" && hosted.format === RUNTIME_FORMAT) {
      this.state.pendingFork = { manager, sessionFile: boundary.targetSessionFile, jobs: await hosted.runtime.handover() };
    }
    return report;
  }

  /** `session_start` of a fork: the forked session (the same manager in memory, else the fork's file) takes its jobs. */
  forked(manager: object): void {
    const pending = this.state.pendingFork;
    this.state.pendingFork = undefined;
    if (!pending) return;
    const file = (manager as { getSessionFile?: () => string | undefined }).getSessionFile?.();
    if (pending.manager === manager || (pending.sessionFile !== undefined && pending.sessionFile === file))
      this.addHandover(manager, pending.jobs);
  }

  /** Refuses new commands while children of an earlier session could not be stopped. */
  assertNoUnstoppedChildren(): void {
    const alive = aliveGroups([...this.state.unstopped]);
    this.state.unstopped.clear();
    for (const pgid of alive) this.state.unstopped.add(pgid);
    if (alive.length === 0) return;
    throw new ExecRequestError(
      `Processes of an earlier session could not be stopped (process groups ${alive.join(", ")}), so no new command is ` +
        `started until they are gone. Stop them by hand (kill -KILL -${alive[0]}) or wait for them to exit.`,
    );
  }

  /** Keeps jobs for `manager`'s next runtime, at most {@link HANDOVER_MAX_JOBS}, newest kept. */
  private addHandover(manager: object, jobs: readonly Job[]): void {
    const kept = [...(this.state.handovers.get(manager) ?? []), ...jobs].slice(-HANDOVER_MAX_JOBS);
    if (kept.length) this.state.handovers.set(manager, kept);
  }

  private takeHandover(manager: object): Job[] {
    const jobs = this.state.handovers.get(manager) ?? [];
    this.state.handovers.delete(manager);
    return jobs;
  }

  private connect(runtime: ExecRuntime): void {
    // The run first: a retried batch must not go out in the middle of a run.
    if (this.running) runtime.completions.runStarted();
    runtime.completions.bindSender(this.sender);
    if (!this.running) runtime.completions.runSettled();
    for (const listener of this.created) listener(runtime);
  }
}
