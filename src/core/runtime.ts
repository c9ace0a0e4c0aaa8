import { EARLY_EXIT_GRACE_MS, GROUP_PROBE_INTERVAL_MS, SHUTDOWN_GRACE_MS, SHUTDOWN_KILL_CONFIRM_MS } from "./constants.ts";
import { ExecRequestError, UnknownSessionError } from "./errors.ts";
import type { JobInput } from "./input.ts";
import { Job, type InputOutcome, type JobExit } from "./job.ts";
import { LogDirectory } from "./job-log.ts";
import { aliveGroups, signalGroup, waitForGroupsEmpty } from "./process-group.ts";
import { JobRegistry } from "./registry.ts";
import type { ExecRequest } from "./request.ts";
import { type TerminalSize, terminalSize } from "./terminal-size.ts";
import type { Window } from "./wait-policy.ts";
import { type WaitEnd, waitForExit } from "./wait.ts";

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
}

/** What a `write_stdin` call does besides waiting: send input, resize the PTY first. */
export interface Interaction {
  input?: JobInput;
  resize?: { cols?: number; rows?: number };
}

/** What shutdown did, for the caller to log or test. */
export interface ShutdownReport {
  terminated: number;
  killed: number;
  /** Groups still alive after SIGKILL (a process in uninterruptible sleep, or one we may not signal). */
  survivors: number[];
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

/**
 * One Pi session's jobs. It spawns and registers them, attaches calls to them for a bounded window,
 * reports each exit exactly once, and on shutdown stops every process group it ever started that is
 * still alive, including groups whose leader exited while a backgrounded descendant lived on.
 */
export class ExecRuntime {
  private readonly registry = new JobRegistry();
  /** Every job whose process group may still have members, published or not. */
  private readonly tracked = new Set<Job>();
  private closed = false;

  constructor(private readonly logs: LogDirectory = new LogDirectory()) {}

  /**
   * Spawns the command and stays attached for its window. A job that exits within the early-exit grace
   * is reported directly and never becomes addressable; one that exits later inside the window is
   * reported and forgotten; one still running gets its `sessionId` back.
   */
  async exec(request: ExecRequest, signal?: AbortSignal): Promise<JobReport> {
    if (this.closed) throw new ExecRequestError("This Pi session is shutting down; no new command can start.");
    this.pruneTracked();
    const job = new Job({
      id: this.registry.allocateId(),
      command: request.command,
      file: request.shell.path,
      args: request.invocation.args,
      verbatim: request.invocation.verbatim,
      cwd: request.cwd,
      env: request.env,
      logs: this.logs,
      ...(request.terminal ? { terminal: request.terminal } : {}),
    });
    this.tracked.add(job);
    const start = job.startedMono;
    let end = await settle(job, await waitForExit(job, start + Math.min(EARLY_EXIT_GRACE_MS, request.window.ms), signal));
    if (end !== "exited") {
      this.registry.publish(job);
      if (end === "deadline") end = await settle(job, await waitForExit(job, start + request.window.ms, signal));
    }
    return this.report(job, request.window, end, start, undefined, request.terminal);
  }

  /**
   * Resizes a published job's PTY and sends its input (neither: a pure poll), stays attached for
   * `window`, and returns what arrived since the previous call. A resize of a pipe job is refused
   * before anything happens; a write that cannot be delivered is reported, never thrown.
   */
  async interact(sessionId: number, interaction: Interaction, window: Window, signal?: AbortSignal): Promise<JobReport> {
    const job = this.registry.get(sessionId);
    if (!job) throw new UnknownSessionError(sessionId);
    const { input, resize } = interaction;
    const current = job.terminalSize;
    if (resize && !current) {
      throw new ExecRequestError(
        `cols and rows resize a terminal, but session ${sessionId} runs on pipes (it was started without tty: true). Nothing was written.`,
      );
    }
    const start = performance.now();
    const size = resize && current ? terminalSize(resize.cols, resize.rows, current) : undefined;
    // Resize before writing, so what the input starts (a redraw, a new prompt) sees the new size.
    if (size && !job.leaderExited) job.resize(size);
    const deadline = start + window.ms;
    const outcome = input ? await sendWithin(job, input, deadline) : undefined;
    const end = await settle(job, await waitForExit(job, deadline, signal));
    return this.report(job, window, end, start, outcome, size);
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
    const errors: string[] = [];
    const send = (pgid: number, signal: NodeJS.Signals) => {
      try {
        signalGroup(pgid, signal);
      } catch (error) {
        errors.push(`${signal} to process group ${pgid} failed: ${(error as Error).message}`);
      }
    };
    const groups = this.liveGroups();
    for (const pgid of groups) send(pgid, "SIGTERM");
    const stubborn = await waitForGroupsEmpty(groups, SHUTDOWN_GRACE_MS, GROUP_PROBE_INTERVAL_MS);
    for (const pgid of stubborn) send(pgid, "SIGKILL");
    const survivors = await waitForGroupsEmpty(stubborn, SHUTDOWN_KILL_CONFIRM_MS, GROUP_PROBE_INTERVAL_MS);
    this.pruneTracked();
    return { terminated: groups.length, killed: stubborn.length, survivors, errors };
  }

  private report(job: Job, window: Window, waitEnd: WaitEnd, startMono: number, input?: InputOutcome, resized?: TerminalSize): JobReport {
    const exit = job.exit;
    if (exit) this.registry.remove(job.id);
    const now = performance.now();
    const output = job.takeOutput();
    const logPartialReason = job.logPartialReason;
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
    };
  }

  /** Process groups of tracked jobs that still have living members, deduplicated. */
  private liveGroups(): number[] {
    this.pruneTracked();
    return aliveGroups([...new Set([...this.tracked].flatMap((job) => job.groups()))]);
  }

  /**
   * Forgets jobs that are over and whose group is proven empty. Done before each spawn and at shutdown,
   * so a pgid is never kept past its group's end and later mistaken for a reused id.
   */
  private pruneTracked(): void {
    const finished = [...this.tracked].filter((job) => job.exit);
    const alive = new Set(aliveGroups(finished.flatMap((job) => (job.pgid === undefined ? [] : [job.pgid]))));
    for (const job of finished) {
      if (job.pgid === undefined || !alive.has(job.pgid)) this.tracked.delete(job);
    }
  }
}

/**
 * Sends input, but never waits past the call's deadline for it: a child that does not read its stdin
 * fills the pipe, and the write then stays pending until it reads.
 */
async function sendWithin(job: Job, input: JobInput, deadlineMono: number): Promise<InputOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<InputOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ input: input.kind, failure: "stdin write still pending: the job has not read its input yet (its stdin pipe is full)" }),
      Math.max(0, deadlineMono - performance.now()),
    );
  });
  try {
    return await Promise.race([job.send(input), pending]);
  } finally {
    clearTimeout(timer);
  }
}
