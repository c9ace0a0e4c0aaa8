import { randomBytes } from "node:crypto";
import {
  EARLY_EXIT_GRACE_MS,
  GROUP_PROBE_INTERVAL_MS,
  HANDOVER_SETTLE_MS,
  JOB_MARKER_ENV,
  SHUTDOWN_GRACE_MS,
  SHUTDOWN_KILL_CONFIRM_MS,
  WARN_JOBS,
} from "./constants.ts";
import { ExecRequestError, UnknownSessionError } from "./errors.ts";
import { guardAtExit } from "./exit-guard.ts";
import type { JobInput } from "./input.ts";
import { type InputOutcome, Job, type JobExit, type Termination } from "./job.ts";
import { LogDirectory } from "./job-log.ts";
import { OrphanGuard } from "./orphan-guard.ts";
import { aliveGroups, signalGroup, waitForGroupsEmpty } from "./process-group.ts";
import { processesWithEnvironment, processTable } from "./process-table.ts";
import { type ProgressOptions, watchProgress } from "./progress.ts";
import { JobRegistry } from "./registry.ts";
import type { ExecRequest } from "./request.ts";
import { type TerminalSize, terminalSize } from "./terminal-size.ts";
import { type WaitEnd, waitForExit } from "./wait.ts";
import type { Window } from "./wait-policy.ts";
import { CompletionCoordinator, type SetOnExitStatus, type WakeJob } from "./wakes.ts";

/** Slots in use, for the warning results carry when the registry runs full. */
export interface SlotUse {
  used: number;
  capacity: number;
}

/** What one call learned about one job: its state now and the output since the previous call. */
export interface JobReport {
  jobId: number;
  /** Set while the job runs: the id the model uses to reach it again. */
  sessionId?: number;
  exit?: JobExit;
  command: string;
  cwd: string;
  window: Window;
  waitEnd: WaitEnd;
  /** Milliseconds this call spent attached to the job. */
  wallMs: number;
  /** Model text of the output since the previous call (decoded, terminal-rendered, not yet capped). */
  text: string;
  /** Bytes retention dropped from this call's output (the text has a marker where they were). */
  omittedBytes: number;
  outputBytesTotal: number;
  quietMs: number;
  logPath: string;
  /** Why the log is incomplete, if it is. */
  logPartialReason?: string;
  /** What this call sent to the job, if anything. */
  input?: InputOutcome;
  tty: boolean;
  /** The PTY's size after this call (with what was asked, where clamped). */
  terminal?: TerminalSize;
  /** Present when the registry is nearly full. */
  slots?: SlotUse;
  /** The call was cancelled (Esc): nothing was read, the job stays as it was. */
  cancelled?: boolean;
  /** This call's result carries the exit of a job whose wake was armed: the wake is consumed. */
  wakeConsumed?: boolean;
  /** The job's completion wake is armed and stays armed after this result (it does not carry the exit). */
  wakeArmed?: boolean;
}

/** Who is asking, for exactly-once completion: the tool call's id, and the outermost call it runs in. */
export interface CallContext {
  signal?: AbortSignal;
  /** Called while the call waits: when output arrived (at most every 250 ms), and every `quietRefreshMs` when quiet. */
  onProgress?: ProgressOptions["onProgress"];
  /** For long waits: refresh a quiet wait this seldom (no heartbeat for hours); none by default. */
  quietRefreshMs?: number;
  /** The tool call id; its observation lease is committed when Pi finalizes this call. */
  callId?: string;
  /**
   * For a call nested inside another tool's call: the outermost call id. A finished job's result is
   * kept for it, so repeated nested reads replay the exit until that call is finalized.
   */
  replayScope?: string;
}

/** What a `write_stdin` call does besides waiting: send input, resize the PTY first. */
export interface Interaction {
  input?: JobInput;
  resize?: { cols?: number; rows?: number };
}

/** What `kill_session` did. */
export interface KillReport extends Termination {
  sessionId: number;
  command: string;
  cwd: string;
  /** The job had exited before the kill; nothing was signalled. */
  alreadyExited: boolean;
  exit?: JobExit;
  wallMs: number;
  text: string;
  omittedBytes: number;
  outputBytesTotal: number;
  logPath: string;
  logPartialReason?: string;
}

/** One line of `list_sessions`. */
export interface JobListing {
  sessionId: number;
  command: string;
  cwd: string;
  tty: boolean;
  status: "running" | "exited";
  exit?: JobExit;
  elapsedMs: number;
  quietMs: number;
  outputBytesTotal: number;
  logPath: string;
  logPartial: boolean;
  /** Milliseconds until the hard deadline (running jobs). */
  deadlineRemainingMs?: number;
  /** A call is attached to the job right now. */
  attached: boolean;
  /** The job's completion wake is armed. */
  wakeArmed: boolean;
  /**
   * For an exited job whose process group still has members (a backgrounded descendant):
   * `unconfirmed`, from the first listing on. `kill_session` still reaches it by this id.
   */
  cleanup?: "unconfirmed";
  /** The exit was reported before; the job is listed again only because its group lingers. */
  alreadyReported?: boolean;
}

/** A running job as the UI shows it. */
export interface LiveJob {
  sessionId: number;
  command: string;
  wakeArmed: boolean;
}

/** What shutdown did, for the caller to log or test. */
export interface ShutdownReport {
  terminated: number;
  killed: number;
  /** Groups still alive after SIGKILL (a process in uninterruptible sleep, or one we may not signal). */
  survivors: number[];
  /**
   * Descendants of jobs that had left their job's process groups (setsid), found by the marker every
   * job's environment carries, and stopped with the rest.
   */
  escaped: number[];
  /** Signals that could not be sent, with the reason. */
  errors: string[];
}

/**
 * When a wait ends while the leader has already exited but its last output is still draining (at most
 * POST_EXIT_DRAIN_MS), the exit wins: the call waits for it rather than report a job that is gone as
 * running. This also keeps a job that exited inside the early-exit grace from ever being published.
 */
async function settle(job: Job, end: WaitEnd): Promise<WaitEnd> {
  if (end === "exited" || !job.leaderExited) return end;
  await new Promise<void>((resolve) => job.onExit(resolve));
  return "exited";
}

function busyError(job: Job): ExecRequestError {
  return new ExecRequestError(
    `Session ${job.id} is busy: a ${job.attached} call is attached to it. One call reads or writes a job at a time; ` +
      "wait for that call to return, or stop the job with kill_session.",
  );
}

/**
 * One Pi session's jobs. It admits and spawns them, attaches one call at a time to each for a bounded
 * window, reports each exit exactly once, stops jobs on request with evidence, lists them, and on
 * shutdown stops every process group it ever started that is still alive, including groups whose
 * leader exited while a backgrounded descendant lived on.
 */
export class ExecRuntime {
  private readonly registry: JobRegistry;
  /** Every job whose process group may still have members, registered or not. */
  private readonly tracked = new Set<Job>();
  /** Terminal results saved for repeated nested reads, by job id, until their scope is finalized. */
  private readonly replays = new Map<number, { scope: string; report: JobReport }>();
  /** Completion wakes; Pi binds its sender. */
  readonly completion = new CompletionCoordinator(undefined);
  private readonly changeListeners = new Set<() => void>();
  private closed = false;
  /** Marks this runtime's jobs in their environment (with the job id), so escaped descendants are found. */
  private readonly token = randomBytes(6).toString("hex");
  /** Releases the process-exit guard; set while this runtime has jobs to protect. */
  private unguard: (() => void) | undefined;
  /** The watchdog and the startup sweep: no job outlives the Pi process, however it ends. */
  readonly orphans: OrphanGuard;

  /** `ids`: a source shared by every runtime of the Pi process, so no id ever names two jobs there. */
  constructor(
    private readonly logs: LogDirectory = new LogDirectory(),
    capacity?: number,
    ids?: () => number,
  ) {
    this.registry = new JobRegistry(capacity, ids);
    this.orphans = new OrphanGuard(logs);
  }

  /**
   * Spawns the command and stays attached for its window. A job that exits within the early-exit grace
   * is reported directly and never becomes addressable; one that exits later inside the window is
   * reported and forgotten; one still running gets its `sessionId` back.
   */
  async exec(request: ExecRequest, call: CallContext & { onExit?: "none" | "wake" } = {}): Promise<JobReport> {
    const { signal } = call;
    if (this.closed) throw new ExecRequestError("This Pi session is shutting down; no new command can start.");
    // The first job waits for the sweep of what earlier Pi processes left (a port a dead Pi's server holds).
    await this.orphans.prepare();
    if (this.closed) throw new ExecRequestError("This Pi session is shutting down; no new command can start.");
    this.pruneTracked();
    this.registry.makeRoom();
    const id = this.registry.allocateId();
    const job = new Job({
      id,
      command: request.command,
      file: request.shell.path,
      args: request.invocation.args,
      verbatim: request.invocation.verbatim,
      cwd: request.cwd,
      env: { ...request.env, [JOB_MARKER_ENV]: `${this.token}:${id}` },
      logs: this.logs,
      timeoutMs: request.timeoutMs,
      ...(request.terminal ? { terminal: request.terminal } : {}),
    });
    this.registry.add(job);
    this.tracked.add(job);
    this.orphans.started(job);
    this.unguard ??= guardAtExit({ killNow: () => this.killNow() });
    job.onExit(() => {
      this.orphans.leaderExited(job);
      this.completion.jobExited(wakeJob(job));
      this.changed();
    });
    job.attach("exec_command");
    const stopProgress = watchProgress(job, 0, call);
    try {
      const start = job.startedMono;
      let end = await settle(job, await waitForExit(job, start + Math.min(EARLY_EXIT_GRACE_MS, request.window.ms), signal));
      if (end !== "exited") {
        this.registry.publish(job.id);
        if (end === "deadline") end = await settle(job, await waitForExit(job, start + request.window.ms, signal));
      }
      // A cancelled call (Esc) gives control back at once and consumes nothing, even an exit it saw.
      if (signal?.aborted) {
        this.registry.publish(job.id);
        end = "aborted";
      }
      const report = this.report(job, request.window, end, start, undefined, request.terminal);
      // Armed only when the call hands back a live session_id; an exit inside the window was just returned.
      if (report.sessionId !== undefined && call.onExit === "wake") {
        this.completion.arm(job.id);
        report.wakeArmed = true;
        if (job.exit) this.completion.jobExited(wakeJob(job));
      }
      return report;
    } finally {
      stopProgress();
      job.detach();
      this.changed();
    }
  }

  /**
   * Resizes a published job's PTY and sends its input (neither: a pure poll), stays attached for
   * `window`, and returns what arrived since the previous call. Refused at once, touching nothing, when
   * another call is attached or a pipe job is asked to resize; a write that cannot be delivered is
   * reported, never thrown.
   */
  async interact(sessionId: number, interaction: Interaction, window: Window, call: CallContext = {}): Promise<JobReport> {
    const { signal, callId } = call;
    const job = this.registry.get(sessionId);
    if (!job) {
      const replay = this.replays.get(sessionId);
      if (replay && call.replayScope === replay.scope) return { ...replay.report, wallMs: 0, text: "" };
      throw new UnknownSessionError(sessionId);
    }
    const { input, resize } = interaction;
    const current = job.terminalSize;
    if (resize && !current) {
      throw new ExecRequestError(
        `cols and rows resize a terminal, but session ${sessionId} runs on pipes (it was started without tty: true). Nothing was written.`,
      );
    }
    if (!job.attach("write_stdin")) throw busyError(job);
    if (callId) this.completion.lease(callId, job.id);
    let report: JobReport | undefined;
    const stopProgress = watchProgress(job, job.outputBytesTotal, call);
    try {
      const start = performance.now();
      const size = resize && current ? terminalSize(resize.cols, resize.rows, current) : undefined;
      // Resize before writing, so what the input starts (a redraw, a new prompt) sees the new size.
      if (size && !job.leaderExited) job.resize(size);
      const deadline = start + window.ms;
      const outcome = input ? await job.send(input, deadline) : undefined;
      let end = await settle(job, await waitForExit(job, deadline, signal));
      // A cancelled call (Esc) gives control back at once and consumes nothing, even an exit it saw.
      if (signal?.aborted) end = "aborted";
      report = this.report(job, window, end, start, outcome, size);
      // A poll says the wake is armed as exec_command did: the model must not wait for a wake it disarmed.
      if (!report.exit && this.completion.isArmed(job.id)) report.wakeArmed = true;
      return report;
    } finally {
      stopProgress();
      job.detach();
      if (callId) this.settleLease(callId, job.id, report, call.replayScope);
      this.changed();
    }
  }

  /**
   * Ends a call's lease on a job: a result that carries the exit is an observation (committed when Pi
   * finalizes the call), anything else (no exit, a cancel, a throw) releases the wake.
   */
  private settleLease(callId: string, sessionId: number, report: JobReport | undefined, replayScope: string | undefined): void {
    if (!report?.exit) {
      this.completion.release(callId);
      return;
    }
    if (this.completion.isArmed(sessionId)) report.wakeConsumed = true;
    this.completion.observed(callId, sessionId);
    if (replayScope) this.replays.set(sessionId, { scope: replayScope, report: { ...report } });
  }

  /** The outermost call a nested read ran in was finalized: its saved results are no longer replayed. */
  endScope(scope: string): void {
    for (const [sessionId, replay] of this.replays) if (replay.scope === scope) this.replays.delete(sessionId);
  }

  /** Changes a job's wake policy; `found: false` for an id the runtime has never heard of or forgotten. */
  setOnExit(sessionId: number, policy: "none" | "wake"): { found: false } | { found: true; status: SetOnExitStatus } {
    const job = this.registry.get(sessionId);
    if (!job && !this.completion.knows(sessionId)) return { found: false };
    return { found: true, status: this.completion.setOnExit(sessionId, policy, job ? job.exit !== undefined : true) };
  }

  /**
   * Stops a job by id, attached call or not (that call then returns the exit). Also reaches the
   * lingering group of a job whose exit was already reported. A kill that fails keeps the job
   * registered, so it can be tried again. A kill by the `user` (the sessions picker) reads and
   * consumes nothing: the job stays registered with its exit and unread output, so the model's next
   * call on its id hears once that the user stopped it.
   */
  async kill(sessionId: number, signal: NodeJS.Signals, callId?: string, by: "model" | "user" = "model"): Promise<KillReport> {
    const registered = this.registry.get(sessionId);
    const job = registered ?? [...this.tracked].find((candidate) => candidate.id === sessionId && candidate.exit);
    if (!job) throw new UnknownSessionError(sessionId);
    const start = performance.now();
    const forModel = by === "model";
    const lingering = job.exit !== undefined && job.groups().length > 0 && aliveGroups(job.groups()).length > 0;
    if (job.exit && !lingering) {
      if (!registered) throw new UnknownSessionError(sessionId);
      // The kill's result reports the exit: it observes it like a poll would.
      if (callId && forModel) this.completion.observed(callId, job.id);
      return this.killReport(job, start, { signal, escalated: false, cleanup: "confirmed", survivors: [] }, true, forModel);
    }
    // A stop on purpose wakes nobody; the wake is held before the signal and restored if the kill fails.
    const restore = this.completion.suppress(job.id);
    const termination = await job.terminate(signal, forModel ? "killed" : "user");
    if (termination.failure || !job.exit) restore();
    else this.completion.dropWake(job.id);
    const report = this.killReport(job, start, termination, false, forModel && registered !== undefined);
    this.changed();
    return report;
  }

  /**
   * Every registered job, and every reported job whose group lingers. Exited jobs are listed once more
   * and then forgotten, unless a call is attached to them (that call reports the exit).
   */
  list(callId?: string): JobListing[] {
    this.pruneTracked();
    const now = performance.now();
    const registered = this.registry.jobs();
    const lingering = [...this.tracked].filter((job) => job.exit && !registered.includes(job) && aliveGroups(job.groups()).length > 0);
    const listing = [...registered.map((job) => this.listing(job, now, false)), ...lingering.map((job) => this.listing(job, now, true))];
    for (const job of registered) {
      if (!job.exit || job.attached) continue;
      this.registry.remove(job.id);
      // Listing an exit reports it: it consumes a wake not yet sent.
      if (callId) this.completion.observed(callId, job.id);
    }
    this.changed();
    return listing;
  }

  /** Running jobs, oldest first, as the footer and the sessions picker show them. */
  liveJobs(): LiveJob[] {
    return this.registry
      .jobs()
      .filter((job) => !job.exit)
      .map((job) => ({ sessionId: job.id, command: job.command, wakeArmed: this.completion.isArmed(job.id) }));
  }

  /** Calls `listener` whenever a job starts, exits or is forgotten. Returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
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

  /** Said once, in the first result that asks: what the startup sweep stopped of an earlier Pi process. */
  takeNotice(): string | undefined {
    return this.orphans.takeNotice();
  }

  /** Published jobs (running, or exited but not yet reported). */
  jobs(): Job[] {
    return this.registry.jobs();
  }

  /**
   * Stops everything this runtime started: SIGTERM to every live group, {@link SHUTDOWN_GRACE_MS} of
   * grace, SIGKILL to the survivors, then a bounded wait for the kernel to confirm. No new command is
   * accepted afterwards.
   */
  async shutdown(): Promise<ShutdownReport> {
    this.closed = true;
    this.unguard?.();
    this.unguard = undefined;
    // Pending wakes go first: nothing may announce a job this shutdown is about to stop.
    this.completion.dropAll();
    // Before any signal, so every exit it causes says who stopped the job (`killed_by: boundary`).
    for (const job of this.tracked) job.stopping("boundary");
    const errors: string[] = [];
    const send = (pgid: number, signal: NodeJS.Signals) => {
      try {
        signalGroup(pgid, signal);
      } catch (error) {
        errors.push(`${signal} to process group ${pgid} failed: ${(error as Error).message}`);
      }
    };
    const jobGroups = this.liveGroups();
    const escaped = this.escapees(jobGroups);
    const groups = [...new Set([...jobGroups, ...escaped.map(({ pgid }) => pgid)])];
    for (const pgid of groups) send(pgid, "SIGTERM");
    const stubborn = await waitForGroupsEmpty(groups, SHUTDOWN_GRACE_MS, GROUP_PROBE_INTERVAL_MS);
    for (const pgid of stubborn) send(pgid, "SIGKILL");
    const survivors = await waitForGroupsEmpty(stubborn, SHUTDOWN_KILL_CONFIRM_MS, GROUP_PROBE_INTERVAL_MS);
    // Whatever still holds a job's streams (a daemon that left its process group) must not keep Pi
    // running: our end is closed, so a print or JSON run exits at once.
    for (const job of this.tracked) job.closeStreams();
    this.pruneTracked();
    this.orphans.stop();
    this.changeListeners.clear();
    return { terminated: groups.length, killed: stubborn.length, survivors, escaped: escaped.map(({ pid }) => pid), errors };
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

  /** At process exit, with no time left for grace: SIGKILL to every group still alive. */
  private killNow(): void {
    for (const job of this.tracked) {
      for (const pgid of job.groups()) {
        try {
          signalGroup(pgid, "SIGKILL");
        } catch {
          // The process is exiting; there is no one left to report to.
        }
      }
    }
  }

  private slotUse(): SlotUse | undefined {
    const used = this.registry.size;
    return used >= WARN_JOBS ? { used, capacity: this.registry.capacity } : undefined;
  }

  private report(job: Job, window: Window, waitEnd: WaitEnd, startMono: number, input?: InputOutcome, resized?: TerminalSize): JobReport {
    // A cancelled call reads nothing and reports no exit: the job stays exactly as it was for the next call.
    const cancelled = waitEnd === "aborted";
    const exit = cancelled ? undefined : job.exit;
    if (exit) this.registry.remove(job.id);
    const now = performance.now();
    const output = cancelled ? { text: "", omittedBytes: 0 } : job.takeOutput();
    const logPartialReason = job.logPartialReason;
    const slots = this.slotUse();
    return {
      jobId: job.id,
      ...(exit ? { exit } : { sessionId: job.id }),
      command: job.command,
      cwd: job.cwd,
      window,
      waitEnd,
      wallMs: now - startMono,
      text: output.text,
      omittedBytes: output.omittedBytes,
      outputBytesTotal: job.outputBytesTotal,
      quietMs: job.quietMs(now),
      logPath: job.logPath,
      ...(logPartialReason ? { logPartialReason } : {}),
      ...(input ? { input } : {}),
      tty: job.tty,
      ...(job.terminalSize ? { terminal: resized ?? job.terminalSize } : {}),
      ...(slots ? { slots } : {}),
      ...(cancelled ? { cancelled } : {}),
    };
  }

  /** `consume`: the result carries the exit and the unread output (the model's kill of a registered job). */
  private killReport(job: Job, startMono: number, termination: Termination, alreadyExited: boolean, consume = true): KillReport {
    // The kill reports the exit (and the output since the last read) unless it failed to stop the job.
    if (job.exit && consume) this.registry.remove(job.id);
    const output = consume ? job.takeOutput() : { text: "", omittedBytes: 0 };
    const logPartialReason = job.logPartialReason;
    return {
      ...termination,
      sessionId: job.id,
      command: job.command,
      cwd: job.cwd,
      alreadyExited,
      ...(job.exit ? { exit: job.exit } : {}),
      wallMs: performance.now() - startMono,
      text: output.text,
      omittedBytes: output.omittedBytes,
      outputBytesTotal: job.outputBytesTotal,
      logPath: job.logPath,
      ...(logPartialReason ? { logPartialReason } : {}),
    };
  }

  /** `alreadyReported`: listed only because its group lingers (the caller checked it is alive). */
  private listing(job: Job, now: number, alreadyReported: boolean): JobListing {
    // An exited job whose group still has members says so on its first listing too, not only later.
    const lingers = job.exit !== undefined && (alreadyReported || aliveGroups(job.groups()).length > 0);
    return {
      sessionId: job.id,
      command: job.command,
      cwd: job.cwd,
      tty: job.tty,
      status: job.exit ? "exited" : "running",
      ...(job.exit ? { exit: job.exit } : { deadlineRemainingMs: Math.max(0, Math.round(job.deadlineMono - now)) }),
      elapsedMs: Math.round(now - job.startedMono),
      quietMs: job.quietMs(now),
      outputBytesTotal: job.outputBytesTotal,
      logPath: job.logPath,
      logPartial: job.logPartialReason !== undefined,
      attached: job.attached !== undefined,
      wakeArmed: this.completion.isArmed(job.id),
      ...(lingers ? { cleanup: "unconfirmed" as const } : {}),
      ...(alreadyReported ? { alreadyReported: true } : {}),
    };
  }

  /** Living processes outside `groups` that carry this runtime's job marker, with their own groups. */
  private escapees(groups: readonly number[]): { pid: number; pgid: number }[] {
    const marked = new Set(processesWithEnvironment(JOB_MARKER_ENV, `${this.token}:`));
    if (marked.size === 0) return [];
    const ours = new Set(groups);
    return (processTable() ?? []).filter((entry) => marked.has(entry.pid) && !ours.has(entry.pgid)).map(({ pid, pgid }) => ({ pid, pgid }));
  }

  /** Process groups of tracked jobs that still have living members, deduplicated. */
  private liveGroups(): number[] {
    this.pruneTracked();
    return aliveGroups([...new Set([...this.tracked].flatMap((job) => job.groups()))]);
  }

  /**
   * Forgets jobs that are over, whose groups are proven empty and whose streams are closed. Done
   * before each spawn, each listing and at shutdown. A job whose groups were once seen empty never
   * names them again, so a reused id is never mistaken for it; one whose streams a daemon still holds
   * stays, so shutdown finds the daemon and closes our end.
   */
  private pruneTracked(): void {
    const finished = [...this.tracked].filter((job) => job.exit);
    const groups = new Map(finished.map((job) => [job, job.groups()]));
    const alive = new Set(aliveGroups([...groups.values()].flat()));
    for (const job of finished) {
      if (groups.get(job)!.some((group) => alive.has(group))) continue;
      job.noteGroupsEnded();
      if (job.streamsOpen) continue;
      this.tracked.delete(job);
      this.orphans.forgotten(job);
    }
  }
}

/** What a wake says about a job that ended: bounded metadata only, never its output. */
function wakeJob(job: Job): WakeJob {
  const exit = job.exit;
  const reasons = [
    exit?.stoppedBy === "timeout" ? "stopped at its timeout_s deadline" : undefined,
    exit?.stoppedBy === "log_quota" ? "stopped when its log reached the quota" : undefined,
    exit?.failure,
  ].filter((reason): reason is string => reason !== undefined);
  return {
    sessionId: job.id,
    command: job.command,
    cwd: job.cwd,
    exitCode: exit?.exitCode ?? null,
    signal: exit?.signal ?? null,
    elapsedMs: Math.round(performance.now() - job.startedMono),
    logPath: job.logPath,
    ...(reasons.length ? { reason: reasons.join("; ") } : {}),
  };
}
