import { AttachedCall, type CallContext } from "./attached-call.ts";
import type { NoticeLevel } from "./completion/attention.ts";
import { CompletionLedger } from "./completion/completion-ledger.ts";
import { JobWakes, type WakeChange, type WakeChangeResult, wakeOf } from "./completion/job-wakes.ts";
import type { Job } from "./job/job.ts";
import type { TypingSession } from "./job/job-holders.ts";
import type { JobListing, JobReport, JobSnapshot, KillReport } from "./job/job-snapshot.ts";
import { stepJob, watchUntil } from "./job/job-step.ts";
import type { Termination } from "./job/job-stop.ts";
import { combinedInput } from "./job/person-news.ts";
import { JobRegistry } from "./job/registry.ts";
import { JobLauncher } from "./job-launcher.ts";
import { JobReports } from "./job-reports.ts";
import { LogDirectory } from "./log/job-log.ts";
import type { ShownPart } from "./output/shown-part.ts";
import { aliveGroups } from "./processes/process-group.ts";
import { type ExecRequest, refuseScreenOnPipes, type WriteRequest } from "./request/request.ts";
import { terminalSize } from "./screen/terminal-size.ts";
import { EARLY_EXIT_GRACE_MS, HANDOVER_SETTLE_MS, PRUNE_BACKLOG_JOBS, PRUNE_IDLE_MS } from "./shared/constants.ts";
import { ExecRequestError, UnknownJobError } from "./shared/errors.ts";
import { OrphanGuard } from "./supervision/orphan-guard.ts";
import { type ShutdownReport, TrackedJobs } from "./supervision/tracked-jobs.ts";
import type { WarmShells } from "./transport/warm-shells.ts";

export type { PatternStatus, WakeChange, WakeChangeResult } from "./completion/job-wakes.ts";
export type { ShutdownReport } from "./supervision/tracked-jobs.ts";

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

/**
 * One Pi session's jobs — the flow every tool call follows:
 * 1. `exec` admits a job (refused before spawning when every slot holds a live job), spawns it,
 *    attaches the call and waits up to the early-exit grace: a job that ends that soon is reported
 *    directly and never becomes addressable; otherwise it is published under its id and the call
 *    waits for the rest of its window.
 * 2. `interact` attaches a call to a published job: resize, send, wait, take the output since the
 *    previous call (`stepJob`); the exit is reported once, then the id is unknown. With `ask_user` the
 *    user types into the job first (`typeInto` is the same from the sessions picker).
 * 3. `kill` stops a job with escalation and evidence; `list` shows every job and reports each exit
 *    once more; `setOnExit` changes a wake.
 * 4. `shutdown` stops everything this runtime started, descendants that outlived a finished command
 *    included, and hands the unread ends to the session's next runtime where a boundary allows it.
 * Exactly-once completion lives in {@link CompletionLedger}; every result reads a {@link JobSnapshot}.
 */
export class ExecRuntime {
  /** Exactly-once completion: the Pi layer binds the sender and reports calls' starts and ends. */
  readonly completions = new CompletionLedger<JobReport>({
    draining: (jobId) => this.registry.draining(jobId),
    waitsForInput: (jobId) => this.wakes.stillWaitsForInput(jobId),
    // A wake never quotes a job a person typed into; one the runtime no longer holds, it cannot vouch for.
    typedInto: (jobId) => this.registry.get(jobId)?.holders.typedInto ?? true,
  });
  readonly orphans: OrphanGuard;
  private readonly registry: JobRegistry;
  private readonly tracked: TrackedJobs;
  private readonly reports: JobReports;
  private readonly wakes: JobWakes;
  /** Starts jobs: a warm shell or a spawn in a turn of its own, the job's marker, the exit guard. */
  private readonly launcher: JobLauncher;
  private readonly changeListeners = new Set<() => void>();
  /** Calls attached to jobs right now (a steer ends all their waits). */
  private readonly attachedCalls = new Set<AttachedCall>();
  private closed = false;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(options: RuntimeOptions = {}) {
    const logs = options.logs ?? new LogDirectory();
    this.registry = new JobRegistry(options.capacity, options.ids);
    this.orphans = new OrphanGuard(logs);
    this.launcher = new JobLauncher(logs, this.orphans, options.warmShells, () => this.tracked.killNow());
    this.tracked = new TrackedJobs(this.launcher.token, this.orphans);
    this.wakes = new JobWakes(this.registry, this.completions);
    this.reports = new JobReports(this.registry, this.completions, this.tracked, `${this.launcher.token}:`);
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
      const watch = request.until ? watchUntil(job, request.until, this.reports.listenReader(job)) : undefined;
      const ends = { signal: call.signal, steer: attached.steer, condition: watch?.met };
      let end = await job.wait(job.startedMono + Math.min(EARLY_EXIT_GRACE_MS, request.window.ms), ends);
      if (end !== "exited") this.registry.publish(job.id);
      if (end === "deadline") end = await job.wait(job.startedMono + request.window.ms, ends);
      watch?.stop();
      // A cancelled call (Esc) gives control back at once and consumes nothing, even an exit it saw.
      if (call.signal?.aborted) {
        this.registry.publish(job.id);
        end = "aborted";
      }
      const matchedLine = end === "matched" ? watch?.matchedLine() : undefined;
      const listening = end === "listening" ? watch?.listening() : undefined;
      if (end !== "matched") job.endWatch();
      // Armed only when the call hands back a live id (as on_exit); the call's own lines are its to return.
      if (request.wakePattern && !job.exit) this.wakes.armPattern(job, request.wakePattern);
      const output = end === "aborted" ? undefined : job.takeOutput(request.shown);
      const screen = output ? await job.screenView(request.screen) : undefined;
      report = this.reports.call(job, {
        window: request.window,
        end,
        startMono: callStart,
        conditional: request.until !== undefined,
        ...(output ? { output } : {}),
        ...(matchedLine ? { matchedLine } : {}),
        ...(listening ? { listening } : {}),
        ...(screen ? { screen } : {}),
      });
      if (request.terminal) report.terminal = request.terminal;
      // Armed only when the call hands back a live id; an exit inside the window was just returned.
      if (!report.job.exit && call.onExit && call.onExit !== "none") {
        this.wakes.armExit(job.id, call.onExit);
        if (job.exit) this.completions.jobExited(wakeOf(this.reports.snapshot(job)));
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

  /**
   * Attaches a call to a published job for its window: resize, send, wait, take the output (step 2).
   * Refused at once, touching nothing, when another call is attached or a pipe job is asked to resize;
   * a write that cannot be delivered is reported, never thrown.
   */
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
        ...(request.shown ? { shown: request.shown } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
      report = this.reports.call(job, {
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

  /**
   * The sessions picker's "Type into it": the user takes a running job's keyboard until they end the
   * session; the model's next result on the job says how many bytes they typed, never which.
   */
  typeInto(jobId: number): { typing: TypingSession; job: Job } | { refused: "unknown" | "exited" | "typing" } {
    const job = this.registry.get(jobId);
    if (!job) return { refused: "unknown" };
    if (job.exit || job.leaderExited) return { refused: "exited" };
    const typing = job.startTyping("next-result");
    if (!typing) return { refused: "typing" };
    this.changed();
    return { typing, job };
  }

  /**
   * The user typed a message Pi delivers as a steer: every call waiting on a job of this runtime
   * returns now with the output so far (`steered`); the jobs run on and armed wakes stay armed.
   */
  steer(): void {
    for (const call of this.attachedCalls) call.steered();
  }

  /** Changes a job's wakes without touching the process (see {@link JobWakes.change}). */
  setOnExit(jobId: number, change: WakeChange, by: "model" | "user" = "model"): WakeChangeResult {
    return this.wakes.change(jobId, change, by);
  }

  /**
   * Stops a job by id, attached call or not (that call then returns the exit). Also reaches the
   * lingering groups of a job whose exit was already reported. A kill that fails keeps the job
   * registered, so it can be tried again. A kill by the `user` (the sessions picker) reads and
   * consumes nothing: the job stays registered with its exit and unread output, so the model's next
   * call on its id hears once that the user stopped it.
   */
  async kill(
    jobId: number,
    signal: NodeJS.Signals,
    callId?: string,
    by: "model" | "user" = "model",
    shown?: ShownPart,
  ): Promise<KillReport> {
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
      return this.reports.kill(job, startMono, done, { alreadyExited: true, consume: forModel, callId, shown, forModel });
    }
    // A stop on purpose wakes nobody; the wake is held before the signal and restored if the kill fails.
    const restore = this.completions.hold(job.id);
    const termination = await job.terminate(signal, forModel ? "killed" : "user");
    if (termination.failure || !job.exit) restore();
    else this.completions.drop(job.id);
    const consume = forModel && registered !== undefined;
    const report = this.reports.kill(job, startMono, termination, { alreadyExited: false, consume, callId, shown, forModel });
    this.changed();
    return report;
  }

  /**
   * Every registered job, and every reported job whose groups linger. Exited jobs are listed once
   * more and then forgotten, unless a call is attached to them (that call reports the exit).
   */
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

  /**
   * Stops everything this runtime started (step 4): pending wakes go first, then every tracked job is
   * marked as stopped by the boundary and its groups stopped (TERM, grace, KILL). No new command is
   * accepted afterwards.
   */
  async shutdown(): Promise<ShutdownReport> {
    this.closed = true;
    clearTimeout(this.pruneTimer);
    this.launcher.stop();
    // Pending wakes go first: nothing may announce a job this shutdown is about to stop.
    this.completions.dropAll();
    // Before any signal, so every exit it causes says who stopped the job (`killed_by: boundary`).
    for (const job of this.tracked.all()) job.stopping("boundary");
    const report = await this.tracked.stopAll();
    await this.orphans.stop();
    this.changeListeners.clear();
    return report;
  }

  /**
   * After shutdown: the published jobs whose exit the model has not read yet (stopped by the
   * shutdown, or ended before it), for the session's next runtime to answer once by id. Exits still
   * draining get {@link HANDOVER_SETTLE_MS}; a job not final by then is not handed over.
   */
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

  /**
   * Takes over the finished jobs an earlier runtime of this session handed over: each id answers the
   * model's next call once (exit, `killed_by`, unread output), then is unknown. No wake crosses.
   */
  inherit(jobs: readonly Job[]): void {
    for (const job of jobs) if (job.exit) this.registry.adopt(job);
  }

  /**
   * Forgets the jobs that are over once calls pause ({@link PRUNE_IDLE_MS}): proving groups empty reads
   * the process table, which must not land between calls back to back or in one message.
   */
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
      reserved ||= this.registry.reserve();
    };
    admit();
    const started = this.launcher.launch(this.registry.allocateId(), request, admit);
    const job = await started.catch((error: unknown) => this.registry.startFailed(reserved, error));
    // Tracked first: whatever happens next, shutdown and the boundaries reach its processes.
    this.tracked.add(job);
    this.registry.add(job);
    // The watchdog learns when the shell exited, even when what it started runs on in the job.
    job.onShellExit(() => this.orphans.leaderExited(job));
    job.onExit(() => {
      this.completions.jobExited(wakeOf(this.reports.snapshot(job)));
      this.changed();
    });
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
