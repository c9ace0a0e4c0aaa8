import {
  aliveGroups,
  ExecRequestError,
  ExecRuntime,
  HANDOVER_MAX_JOBS,
  holdSignalsWhile,
  type Job,
  RELOAD_ADOPTION_MS,
  type ShutdownReport,
  type WakeBatch,
  type WakeSender,
} from "../core/index.ts";
import { type HostState, hostState, RUNTIME_FORMAT } from "./host-state.ts";

/** What adopting a parked runtime after `/reload` came to. */
export type Adoption = { adopted: ExecRuntime } | { refused: ExecRuntime; format: number } | undefined;

/** What a session boundary is, as `session_shutdown` tells it. */
export interface Boundary {
  reason: string;
  /** The session that replaces this one (for a fork: the forked session's file). */
  targetSessionFile?: string | undefined;
}

/**
 * This extension instance's view of the runtimes: the one of the session it serves, created on the
 * first tool call (activation starts nothing), parked across `/reload`, adopted by the next instance,
 * and stopped at a session boundary. Delivery of wakes and the UI are bound per instance, because the
 * old instance's `pi` and `ctx` throw once Pi replaced them. Where a conversation outlives its runtime
 * (a fork, a runtime given up after `/reload`), the next runtime takes over the stopped jobs whose exit
 * the model has not read, so each old id answers once with what happened.
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

  /**
   * `/reload`: the runtime keeps running (jobs, buffers, logs, deadlines, pending wakes) without
   * delivery, for the next instance to adopt. Not adopted in time, it stops its jobs.
   */
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

  /**
   * `session_start` after `/reload`: takes over the parked runtime, or refuses one stamped by another
   * build (the caller stops it and tells the user).
   */
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
   * A session boundary (`new`, `resume`, `fork`, `quit`): the session's jobs are stopped (pending
   * wakes first) and its runtime forgotten. Groups that could not be stopped are remembered
   * process-wide and block new commands until they are gone. A fork keeps the conversation, and the
   * ids in it: its unread jobs wait for the forked session (`forked`). New, resume and quit leave the
   * conversation behind, so nothing of the old jobs crosses them.
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

  /**
   * `session_start` of a fork: the forked session (the same SessionManager object for an in-memory
   * fork, else the one whose file the fork named) takes the jobs the fork stopped.
   */
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
