/*
 * The core's entry: one Pi session's jobs (`ExecRuntime`). The flow every tool call follows:
 * 1. `exec` checks a request (`request/`), admits and starts a job (`job/`, `transport/`), attaches
 *    the call and waits up to the early-exit grace: a job that ends that soon is reported directly and
 *    never becomes addressable; otherwise it is published under its id for the rest of its window.
 * 2. `interact` attaches a call to a published job: resize, send, wait, read; the exit is reported
 *    once, then the id is unknown. With `ask_user` the user types into the job first (`typeInto`).
 * 3. `kill` stops a job; `list` shows every job and reports each exit once more; `setOnExit` changes a wake.
 * 4. `shutdown` stops everything it started (`supervision/`) and hands the unread ends to the next runtime.
 * Exactly-once completion lives in `completion/`; every result reads one `job/job-snapshot.ts` snapshot.
 */
import type { NoticeLevel } from "./completion/attention.ts";
import { CompletionLedger } from "./completion/completion-ledger.ts";
import { JobWakes, type WakeChange, type WakeChangeResult } from "./completion/job-wakes.ts";
import { refuseModelSecret } from "./input-wait/input-wait.ts";
import { AttachedCall, type CallContext, endTurn, stepJob } from "./job/attached-call.ts";
import type { Job } from "./job/job.ts";
import { combinedInput, type TypingSession } from "./job/job-holders.ts";
import { JobLauncher } from "./job/job-launcher.ts";
import { JobReports } from "./job/job-reports.ts";
import type { JobListing, JobReport, JobSnapshot, KillReport } from "./job/job-snapshot.ts";
import type { Termination } from "./job/job-stop.ts";
import { JobRegistry } from "./job/registry.ts";
import { LogDirectory } from "./log/job-log.ts";
import { portsAfterKill } from "./processes/port-conflicts.ts";
import { aliveGroups } from "./processes/process-group.ts";
import { type ExecRequest, refuseScreenOnPipes, type WriteRequest } from "./request/request.ts";
import { terminalSize } from "./screen/terminal-size.ts";
import { EARLY_EXIT_GRACE_MS } from "./shared/constants.ts";
import { ExecRequestError, UnknownJobError } from "./shared/errors.ts";
import { JobMonitor, memoryCap } from "./supervision/job-monitor.ts";
import { guardAtExit, OrphanGuard } from "./supervision/orphan-guard.ts";
import { type ShutdownReport, TrackedJobs } from "./supervision/tracked-jobs.ts";
import type { WarmShells } from "./transport/warm-shells.ts";

export type { PatternStatus, WakeChange, WakeChangeResult } from "./completion/job-wakes.ts";
export type { ShutdownReport } from "./supervision/tracked-jobs.ts";

/** Finished jobs are forgotten (a read of the process table) once calls pause this long, or at once from this many. */
const PRUNE_IDLE_MS = 500;
const PRUNE_BACKLOG_JOBS = 32;
/** After a boundary's shutdown, how long exits still draining may take to be handed over. */
const HANDOVER_SETTLE_MS = 500;

/** How a runtime is made; every field has a default (tests give their own logs, sizes and shells). */
export interface RuntimeOptions {
  /** Where the jobs' logs go (default: a private directory under the OS temp dir, made on first use). */
  logs?: LogDirectory;
  /** Registry slots (default 64). */
  capacity?: number;
  /** A source shared by every runtime of the Pi process, so no id ever names two jobs there. */
  ids?: () => number;
  /** Warm shells for pipe jobs (default: on unless `PI_UNIFIED_EXEC_WARM_SHELL=0`). */
  warmShells?: boolean;
}

/** One Pi session's jobs. */
export class ExecRuntime {
  /** Exactly-once completion: the Pi layer binds the sender and reports calls' starts and ends. */
  readonly completions = new CompletionLedger<JobReport>({
    draining: (jobId) => this.registry.draining(jobId),
    waitsForInput: (jobId) => this.wakes.stillWaitsForInput(jobId),
    // A wake never quotes a job a person typed into; one the runtime no longer holds, it cannot vouch for.
    typedInto: (jobId) => this.registry.get(jobId)?.holders.typedInto ?? true,
    listensAgain: (jobId) => !this.reports.stillDeaf(jobId),
  });
  readonly orphans: OrphanGuard;
  private readonly registry: JobRegistry;
  private readonly tracked: TrackedJobs;
  private readonly reports: JobReports;
  private readonly wakes: JobWakes;
  private readonly launcher: JobLauncher;
  private readonly changeListeners = new Set<() => void>();
  /** Calls attached to jobs right now (a steer ends all their waits). */
  private readonly attachedCalls = new Set<AttachedCall>();
  /** Once a second while jobs run: the memory cap, servers gone deaf. */
  readonly monitor: JobMonitor;
  private closed = false;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** Releases the process-exit guard, armed once the runtime has a job to protect. */
  private unguard: (() => void) | undefined;

  constructor(options: RuntimeOptions = {}) {
    const logs = options.logs ?? new LogDirectory();
    this.registry = new JobRegistry(options.capacity, options.ids);
    this.orphans = new OrphanGuard(logs);
    this.launcher = new JobLauncher(logs, this.orphans, options.warmShells);
    this.tracked = new TrackedJobs(this.launcher.token, this.orphans);
    this.wakes = new JobWakes(this.registry, this.completions);
    this.reports = new JobReports(this.registry, this.completions, this.tracked, `${this.launcher.token}:`);
    this.monitor = new JobMonitor(
      {
        // Tracked from the spawn: a job is published only after the early-exit grace.
        running: () => this.tracked.all().filter((job) => !job.exit),
        measure: (jobs) => this.reports.measure(jobs),
        deafness: (jobs) => this.reports.deafness(jobs),
        overCap: (job, usage, capBytes) => {
          const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
          const note = `stopped at ${mb(usage.rssBytes)} MB of resident memory, over the ${mb(capBytes)} MB cap (PI_UNIFIED_EXEC_MAX_JOB_RSS_MB)`;
          // Memory runs out fast: no grace. A job already being stopped is left to that stop.
          if (!job.stopRequested) void job.terminate("SIGKILL", "memory", note).then(() => this.changed());
        },
        deaf: (job, loss) => this.completions.deafServer({ jobId: job.id, command: job.command, was: loss.was, closedMs: loss.closedMs }),
      },
      memoryCap(),
    );
  }

  /** The warm shells' counters and idle shell (tests, benchmark). */
  get warmShells(): Pick<WarmShells, "counts" | "idle" | "idleCount" | "enabled"> {
    return this.launcher.warmShells;
  }

  /** Spawns the command and stays attached for its window (step 1 above). */
  async exec(request: ExecRequest, call: CallContext & { onExit?: "none" | NoticeLevel } = {}): Promise<JobReport> {
    // The call's wall time counts the spawn too: its window starts before it, and a loaded machine spawns slowly.
    const callStart = performance.now();
    const job = await this.spawn(request);
    let attached: AttachedCall | undefined;
    let report: JobReport | undefined;
    try {
      attached = this.attach(job, "exec", call);
      const watch = request.until ? job.watchUntil(request.until, this.reports.listenReader(job)) : undefined;
      const ends = { signal: call.signal, steer: attached.steer, condition: watch?.met };
      let end = await job.wait(job.startedMono + Math.min(EARLY_EXIT_GRACE_MS, request.window.ms), ends);
      if (end !== "exited") this.registry.publish(job.id);
      if (end === "deadline") end = await job.wait(job.startedMono + request.window.ms, ends);
      if (call.signal?.aborted) this.registry.publish(job.id);
      const plan = { signal: call.signal, screen: request.screen };
      const step = await endTurn(job, end, watch, plan, () => {
        // Armed only when the call hands back a live id (as on_exit); the call's own lines are its to return.
        if (request.wakePattern && !job.exit) this.wakes.armPattern(job, request.wakePattern);
      });
      report = await this.reports.call(job, {
        ...step,
        window: request.window,
        startMono: callStart,
        conditional: request.until !== undefined,
      });
      if (request.terminal) report.terminal = request.terminal;
      // Armed only when the call hands back a live id; an exit inside the window was just returned.
      if (!report.job.exit && call.onExit && call.onExit !== "none") {
        this.wakes.armExit(job.id, call.onExit);
        if (job.exit) this.completions.jobExited(this.reports.exitWake(job));
      }
      return report;
    } finally {
      // A call that failed after its job started leaves it listed and killable, never in no listing.
      if (!report) this.registry.publish(job.id);
      if (attached) this.detach(attached, report);
      if (this.launcher.callEnded()) this.orphans.callsPaused();
      this.pruneWhenIdle();
    }
  }

  /** Step 2. Refused at once, touching nothing, when another call is attached or a pipe job is asked to resize. */
  async interact(request: WriteRequest, call: CallContext = {}): Promise<JobReport> {
    const job = this.registry.get(request.jobId);
    if (!job) {
      const replay = this.completions.replay(call.callId, request.jobId);
      if (replay) return { ...replay, wallMs: 0, output: { text: "", omittedBytes: 0 } };
      throw new UnknownJobError(request.jobId);
    }
    const current = job.terminalSize;
    if (request.resize && !current) {
      throw new ExecRequestError(
        `cols and rows resize a terminal, but session ${request.jobId} runs on pipes (it was started without tty: true). Nothing was written.`,
      );
    }
    refuseScreenOnPipes(request, job.tty);
    // While the user types, the model may poll but not write, resize or ask again.
    if (request.input || request.resize || request.askUser) job.holders.refuseWhileTyping();
    // A job another call holds is refused as busy right below, before any read of its terminal.
    if (request.input?.kind === "bytes" && !request.modelTypesSecrets && job.attached === undefined) {
      await refuseModelSecret(job.id, request.input.bytes, () => job.hidesTyping());
      // The terminal's read let other events run: the person may have taken the keyboard meanwhile.
      job.holders.refuseWhileTyping();
    }
    if (request.askUser && !call.ask) {
      throw new ExecRequestError(
        "ask_user needs Pi's interactive terminal or an RPC client to ask a person; this run has neither. Nothing was asked or written.",
      );
    }
    const attached = this.attach(job, "write", call);
    let report: JobReport | undefined;
    try {
      const asked = request.askUser ? await attached.askTheUser(request.askUser.question) : undefined;
      // After ask_user the window starts when the user is done: their typing has no time limit.
      const startMono = request.askUser ? performance.now() : attached.startMono;
      const size = request.resize && current ? terminalSize(request.resize.cols, request.resize.rows, current) : undefined;
      const step = await stepJob(job, {
        deadlineMono: startMono + request.window.ms,
        steer: attached.steer,
        ...(size ? { resize: size } : {}),
        ...(request.input ? { input: request.input } : {}),
        ...(request.until ? { until: request.until, readListening: this.reports.listenReader(job) } : {}),
        ...(request.screen !== undefined ? { screen: request.screen } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
      report = await this.reports.call(job, {
        ...step,
        window: request.window,
        startMono: attached.startMono,
        conditional: request.until !== undefined,
      });
      if (size) report.terminal = size;
      else if (current) report.terminal = current;
      if (asked) report.userInput = combinedInput(report.userInput, asked);
      return report;
    } finally {
      this.detach(attached, report);
    }
  }

  /** The picker's "Type into it": the model's next result on the job says how many bytes the user typed, never which. */
  typeInto(jobId: number): { typing: TypingSession; job: Job } | { refused: "unknown" | "exited" | "typing" } {
    const job = this.registry.get(jobId);
    if (!job) return { refused: "unknown" };
    if (job.exit || job.leaderExited) return { refused: "exited" };
    const typing = job.startTyping("next-result");
    if (!typing) return { refused: "typing" };
    this.changed();
    return { typing, job };
  }

  /** The user's message came as a steer: every waiting call returns now (`steered`); the jobs run on, wakes stay armed. */
  steer(): void {
    for (const call of this.attachedCalls) call.steered();
  }

  /** Changes a job's wakes without touching the process (see {@link JobWakes.change}). */
  setOnExit(jobId: number, change: WakeChange, by: "model" | "user" = "model"): WakeChangeResult {
    return this.wakes.change(jobId, change, by);
  }

  /**
   * Stops a job by id (an attached call then returns the exit), or the lingering groups of one already
   * reported. A failed kill keeps the job registered. A kill by the `user` consumes nothing: the
   * model's next call on the id hears once that the user stopped it.
   */
  async kill(jobId: number, signal: NodeJS.Signals, callId?: string, by: "model" | "user" = "model"): Promise<KillReport> {
    const registered = this.registry.get(jobId);
    const job = registered ?? this.tracked.exited(jobId);
    if (!job) throw new UnknownJobError(jobId);
    if (by === "model") job.holders.refuseWhileTyping();
    const startMono = performance.now();
    const forModel = by === "model";
    const lingering = job.exit !== undefined && aliveGroups(job.groups()).length > 0;
    if (job.exit && !lingering) {
      if (!registered) throw new UnknownJobError(jobId);
      const done: Termination = { signal, escalated: false, cleanup: "confirmed", survivors: [] };
      return this.reports.kill(job, startMono, done, { alreadyExited: true, consume: forModel, callId, forModel });
    }
    // The ports it listened on, to say once it ended whether they are free again.
    const listened = forModel && !job.exit ? this.reports.listening([job]).get(job.id) : undefined;
    // A stop on purpose wakes nobody; the wake is held before the signal and restored if the kill fails.
    const restore = this.completions.hold(job.id);
    const termination = await job.terminate(signal, forModel ? "killed" : "user");
    if (termination.failure || !job.exit) restore();
    else this.completions.drop(job.id);
    const consume = forModel && registered !== undefined;
    const ports = listened?.length && job.exit ? await portsAfterKill(listened) : undefined;
    const report = this.reports.kill(job, startMono, termination, { alreadyExited: false, consume, callId, forModel, ports });
    this.changed();
    return report;
  }

  /** Every registered job and every reported job whose groups linger (see {@link JobReports.list}). */
  list(callId?: string): JobListing[] {
    const listing = this.reports.list(callId);
    this.changed();
    return listing;
  }

  /** Running jobs, oldest first, as the footer and the sessions picker show them. */
  liveJobs(options: { ports?: boolean } = {}): JobSnapshot[] {
    return this.reports.live(options);
  }

  /** A published job as it is now (running, or exited and not yet reported), for a person's view; it reads and consumes nothing. */
  snapshotOf(jobId: number): JobSnapshot | undefined {
    const job = this.registry.get(jobId);
    return job && this.reports.snapshot(job);
  }

  /** Calls `listener` whenever a job starts, exits or is forgotten. Returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Published jobs (running, or exited but not yet reported). */
  jobs(): Job[] {
    return this.registry.jobs();
  }

  /** What the startup sweep stopped, for the first result that asks; undefined afterwards. */
  takeNotice(): string | undefined {
    return this.orphans.takeNotice();
  }

  /** Step 4: pending wakes go first, then every tracked job is stopped (TERM, grace, KILL); no new command starts. */
  async shutdown(): Promise<ShutdownReport> {
    this.closed = true;
    clearTimeout(this.pruneTimer);
    this.monitor.stop();
    this.launcher.shutdown();
    this.unguard?.();
    this.unguard = undefined;
    // Pending wakes go first: nothing may announce a job this shutdown is about to stop.
    this.completions.dropAll();
    // Before any signal, so every exit it causes says who stopped the job (`killed_by: boundary`).
    for (const job of this.tracked.all()) job.recordStop("boundary");
    const report = await this.tracked.stopAll();
    await this.orphans.stop();
    this.changeListeners.clear();
    return report;
  }

  /** After shutdown: the jobs whose exit the model has not read, for the session's next runtime to answer once by id. */
  async handover(): Promise<Job[]> {
    const unread = this.registry.jobs();
    let timer: NodeJS.Timeout | undefined;
    const exits = Promise.all(unread.map((job) => new Promise<void>((resolve) => job.onExit(resolve))));
    const settled = new Promise((resolve) => {
      timer = setTimeout(resolve, HANDOVER_SETTLE_MS);
    });
    await Promise.race([exits, settled]);
    clearTimeout(timer);
    return unread.filter((job) => job.exit !== undefined);
  }

  /** Takes over an earlier runtime's handed-over jobs: each id answers once, then is unknown. No wake crosses. */
  inherit(jobs: readonly Job[]): void {
    for (const job of jobs) if (job.exit) this.registry.adopt(job);
  }

  /** Proving groups empty reads the process table, which must not land between calls back to back. */
  private pruneWhenIdle(): void {
    clearTimeout(this.pruneTimer);
    const delay = this.tracked.size >= PRUNE_BACKLOG_JOBS ? 0 : PRUNE_IDLE_MS;
    this.pruneTimer = setTimeout(() => this.closed || this.tracked.prune(), delay);
    this.pruneTimer.unref();
  }

  /** Admits a call (refused before spawning: shutting down, or every slot live), starts its job, tracks it at once. */
  private async spawn(request: ExecRequest): Promise<Job> {
    const refuseWhenClosed = () => {
      if (this.closed) throw new ExecRequestError("This Pi session is shutting down; no new command can start.");
    };
    refuseWhenClosed();
    // The first job waits for the sweep of what earlier Pi processes left (a port a dead Pi's server holds).
    await this.orphans.prepare();
    let reserved = false;
    const admit = () => {
      refuseWhenClosed();
      // A job evicted to make room takes its pattern's record in the ledger with it.
      reserved ||= this.registry.reserve((evicted) => this.completions.disarmPattern(evicted.id));
    };
    admit();
    const started = this.launcher.launch(this.registry.allocateId(), request, admit);
    const job = await started.catch((error: unknown) => this.registry.startFailed(reserved, error));
    // Tracked first: whatever happens next, shutdown and the boundaries reach its processes.
    this.tracked.add(job);
    this.unguard ??= guardAtExit({
      killNow: () => {
        this.tracked.killNow();
        this.launcher.killNow();
      },
    });
    this.registry.add(job);
    // The watchdog learns when the shell exited, even when what it started runs on in the job.
    job.onShellExit(() => this.orphans.leaderExited(job));
    job.onExit(() => {
      this.completions.jobExited(this.reports.exitWake(job));
      this.changed();
    });
    this.monitor.poke();
    return job;
  }

  private attach(job: Job, kind: "exec" | "write", call: CallContext): AttachedCall {
    const attached = new AttachedCall(job, kind, call, this.completions, () => this.reports.snapshot(job));
    this.attachedCalls.add(attached);
    return attached;
  }

  private detach(attached: AttachedCall, report: JobReport | undefined): void {
    this.attachedCalls.delete(attached);
    attached.end(report);
    this.changed();
  }

  private changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener();
      } catch {
        // A UI listener must never break the runtime; the UI redraws on the next change.
      }
    }
  }
}
