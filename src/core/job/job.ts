/*
 * job/ — one job's life and every view of it. The flow at a glance:
 * 1. `job-launcher.ts` starts a job through the transport; `registry.ts` gives it an id and a slot.
 * 2. The `Job` (this file) keeps its bytes (`job-output.ts`), takes input (`job-stdin.ts`), and knows
 *    who holds it (`job-holders.ts`: the model's call, the user typing, what the person did).
 * 3. `attached-call.ts` runs one call on it: lease, progress, `ask_user`, the turn (resize, send, wait, read).
 * 4. The shell's exit ends it through `job-ending.ts` (background, drain); `job-stop.ts` stops it.
 * 5. `job-reports.ts` builds every report on one `job-snapshot.ts` snapshot.
 *
 * May import: shared, output, screen, processes, patterns, wait, wake-watch, input-wait, log, transport, request.
 */
import { type InputWait, type InputWaitQuery, looksLikePrompt, probeInputWait, terminalHidesTyping } from "../input-wait/input-wait.ts";
import type { JobLog, LogDirectory } from "../log/job-log.ts";
import type { LinePattern } from "../patterns/line-pattern.ts";
import { PatternBudget } from "../patterns/pattern-budget.ts";
import type { JobInput } from "../request/input.ts";
import { JobScreen, type ScreenView } from "../screen/job-screen.ts";
import type { TransportFactory } from "../transport/spawn.ts";
import type { LeaderExit, Transport } from "../transport/types.ts";
import { CallWait, type ConditionEnd, type UntilSpec } from "../wait/call-wait.ts";
import type { ListenReader } from "../wait/listen-watch.ts";
import type { PatternWatchOptions } from "../wake-watch/pattern-watch.ts";
import { type Background, exitCodeOf, JobEnding, type ShellExit } from "./job-ending.ts";
import { JobHolders, type TypingReport, type TypingSession } from "./job-holders.ts";
import { JobOutput, type OutputDelta, type UnreadTally } from "./job-output.ts";
import { type InputOutcome, JobStdin } from "./job-stdin.ts";
import { stopJob, type Termination } from "./job-stop.ts";

/** A repainting program that printed within this long still runs by itself (top repaints every 3 s by default). */
const REPAINTING_QUIET_MS = 10_000;
/** The longest an exit report waits for its log to reach the disk (a hung disk must not hold it). */
const LOG_FLUSH_ON_EXIT_MS = 5_000;
/** How long a key the user typed may wait for the job's stdin: a program that stops reading must not freeze the overlay. */
const TYPED_DELIVERY_MS = 5_000;
/** Node's timers overflow past 2^31-1 ms (about 24.8 days): longer waits re-arm in chunks. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Who stopped a job: `killed` the model, `user` the person (the sessions picker), `timeout` its
 * `timeout_s`, `log_quota` its log quota (`PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop`), `boundary` a session
 * boundary or a runtime given up after `/reload`, `memory` its processes' memory over the cap.
 */
export type StopReason = "killed" | "user" | "timeout" | "log_quota" | "boundary" | "memory";

/** A job's final state, fixed once the exit is known and the output drained. */
export interface JobExit {
  /** For a death by signal, 128 + its number, as a shell reports it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the job never ran, or failed in a way the exit code cannot say. */
  failure?: string;
  stoppedBy?: StopReason;
}

/** What a job is started with. */
export interface JobSpec {
  id: number;
  /** As the model wrote it (the transport runs the shell). */
  command: string;
  cwd: string;
  logs: LogDirectory;
  transport: TransportFactory;
  /** The shell the transport starts, for the message when it cannot start. */
  program: string;
  /** The PTY's size at spawn; pipes when absent. */
  terminal?: { cols: number; rows: number };
  /** Hard deadline after spawn, whether or not anyone waits on the job. */
  timeoutMs: number;
  /** When the process may have begun (a warm shell runs its job from its answer on); now when absent. */
  startedMono?: number;
}

/**
 * One command's process and everything known about it, in four states (see {@link JobEnding}). Its
 * output goes to {@link JobOutput} and its log, its input through {@link JobStdin}; its hard
 * deadline runs on its own timer. One call at a time is attached to it.
 */
export class Job {
  readonly id: number;
  readonly command: string;
  readonly cwd: string;
  /** Monotonic (performance.now()): the start, the hard deadline, and when the exit became final. */
  readonly startedMono: number;
  readonly deadlineMono: number;
  exitedMono: number | undefined;
  readonly tty: boolean;
  private readonly program: string;
  private readonly transport: Transport;
  private readonly log: JobLog;
  private readonly output: JobOutput;
  readonly stdin: JobStdin;
  /** PTY jobs only. */
  private readonly screen: JobScreen | undefined;
  private readonly end: JobEnding;
  private readonly deadlineTimer: NodeJS.Timeout;
  private size: { cols: number; rows: number } | undefined;
  private final: JobExit | undefined;
  /** Set before the exit is fixed: fixing may finish within the call that starts it. */
  private finishing = false;
  private stopReason: StopReason | undefined;
  /**
   * The terminal's echo flag as last read (`hidesTyping`), the job's motion when it was read, and which
   * read it was: reads may come back out of order, and the latest started wins.
   */
  private hidingRead: { motion: string; hidden: boolean | undefined; seq: number } | undefined;
  private hidingReads = 0;
  private readingHiding: Promise<boolean | undefined> | undefined;
  /** What the exit says of a stop the model did not ask for (the memory at a memory stop). */
  private stopNote: string | undefined;
  /** A stop's signal while the shell's background ran on: the job's exit, not the shell's code. */
  private backgroundStop: NodeJS.Signals | undefined;
  /** Every group was seen empty after the exit: their ids may be reused, so they are never named again. */
  private groupsEnded = false;
  private readonly exitListeners = new Set<() => void>();
  private readonly shellExitListeners = new Set<() => void>();
  readonly holders: JobHolders;
  /** The last byte printed was a line break (or none was printed). */
  private atLineStart = true;

  constructor(spec: JobSpec) {
    this.startedMono = spec.startedMono ?? performance.now();
    this.id = spec.id;
    this.command = spec.command;
    this.cwd = spec.cwd;
    this.program = spec.program;
    this.deadlineMono = this.startedMono + spec.timeoutMs;
    this.output = new JobOutput(this.startedMono);
    const job = this;
    this.end = new JobEnding({
      get pid() {
        return job.pid;
      },
      get tty() {
        return job.tty;
      },
      finish: (failure) => this.finish(failure),
    });
    this.holders = new JobHolders(spec.id);
    const stopOnQuota = spec.logs.config.onQuota === "stop";
    this.log = spec.logs.open(spec.id, {
      drain: () => this.resumeAfterLog(),
      quotaReached: () => {
        if (stopOnQuota) void this.terminate("SIGTERM", "log_quota");
      },
    });
    this.size = spec.terminal && { cols: spec.terminal.cols, rows: spec.terminal.rows };
    const live = () => this.end.state !== "final"; // the screen answers the program's queries; built before the start
    this.screen = this.size ? new JobScreen(this.size, { write: (bytes) => this.transport.write(bytes), live }) : undefined;
    try {
      this.transport = spec.transport({
        data: (chunk) => this.onData(chunk),
        exit: (exit) => this.onLeaderExit(exit),
        closed: () => this.onClosed(),
      });
    } catch (error) {
      this.log.close(); // nothing after the start can fail, so no process runs on without its job
      throw error;
    }
    this.tty = this.transport.kind === "pty";
    this.stdin = new JobStdin(this.transport, { over: () => this.end.state === "final", userHolds: () => this.holders.userTyping });
    // Unref'd: the deadline must not keep a finished Pi alive; while the job lives, its process does.
    this.deadlineTimer = setTimeout(() => void this.terminate("SIGTERM", "timeout"), spec.timeoutMs);
    this.deadlineTimer.unref();
  }

  /** Undefined while the job runs or drains its last output. */
  get exit(): JobExit | undefined {
    return this.final;
  }

  /** Also while processes the leader left run on, or its last output is drained. */
  get leaderExited(): boolean {
    return this.end.state !== "running";
  }

  /** Nothing of the job runs any more: its exit is final or about to be (its last output is being read). */
  get ending(): boolean {
    return this.end.state === "draining" || this.end.state === "final";
  }

  /**
   * While the shell's exit left processes running: its exit and what runs on, looked up now or as the
   * call's wait last looked (`fresh` false). `told`: a result shows it, so later waits are plain waits.
   */
  backgroundNow(told = false, fresh = true): { shellExit: ShellExit; processes: Background } | undefined {
    const processes = this.end.backgroundNow(this.holders.typedInto, fresh);
    const shellExit = this.end.shellExit;
    if (told && processes) this.end.backgroundReported();
    return shellExit && processes ? { shellExit, processes } : undefined;
  }

  /** Also its process group and session id; undefined when it never started. */
  get pid(): number | undefined {
    return this.transport.pid;
  }

  get terminalSize(): { cols: number; rows: number } | undefined {
    return this.size && { ...this.size };
  }

  get logPath(): string {
    return this.log.path;
  }

  get logPartialReason(): string | undefined {
    return this.log.partialReason;
  }

  /** Including bytes retention dropped. */
  get outputBytesTotal(): number {
    return this.output.bytesTotal;
  }

  /** What it printed after the last read, as metadata: lines, bytes, where in the log, failure-looking lines. */
  get unread(): UnreadTally {
    return this.output.unreadTally;
  }

  /** Reads of the output so far (each call that read it, the handover's included). */
  get outputReads(): number {
    return this.output.reads;
  }

  quietMs(nowMono: number = performance.now()): number {
    return this.output.quietMs(nowMono);
  }

  get outputBytesRead(): number {
    return this.output.bytesRead;
  }

  /** The latest output after byte `sinceTotal`, for a live preview; it drains nothing. */
  previewText(sinceTotal = 0): string {
    return this.output.previewText(sinceTotal);
  }

  /** The model's call lets go of the job: the pattern watch goes on with what the call left unread. */
  detachCall(): void {
    this.holders.detach(() => this.output.unread());
  }

  get attached(): string | undefined {
    return this.holders.attached;
  }

  /** Tests later lines against `pattern` (`wake_on_pattern`) while nobody holds the job; undefined stops. */
  watchLines(pattern: LinePattern | undefined, hooks: Pick<PatternWatchOptions, "onHit" | "judgedThrough" | "onSuspend">): void {
    // One budget pays for the wake's watch and the reads' matcher: when it runs out, both stop.
    const budget = pattern && new PatternBudget(() => performance.now());
    this.output.watchReads(pattern, budget);
    const options = { ...hooks, midLine: !this.atLineStart, startAt: this.output.bytesTotal, ...(budget ? { budget } : {}) };
    this.holders.watchLines(this.ending ? undefined : pattern, options);
  }

  /** The user takes the job's keyboard (bytes counted, never kept); undefined when the job is over or they hold it already. */
  startTyping(report: TypingReport): TypingSession | undefined {
    if (this.end.state !== "running") return undefined;
    return this.holders.startTyping((bytes) => this.stdin.sendTyped(bytes, performance.now() + TYPED_DELIVERY_MS), report);
  }

  /**
   * Waits for the exit, the deadline or one of `ends`. A wait that ends while the last output drains
   * waits for the exit (a job that is gone is never reported running, nor published after the
   * early-exit grace); one that sees the shell leave processes running ends `background` after their settle window.
   */
  async wait(deadlineMono: number, ends: WaitEnds = {}): Promise<WaitEnd> {
    const end = await waitForExit(this, deadlineMono, { ...ends, background: (listener) => this.end.onBackgroundSettled(listener) });
    // The report shows this look; one that finds nothing running is the job's end, which the call waits for.
    if (end !== "exited") this.end.backgroundNow(this.holders.typedInto);
    if (end === "exited" || !this.ending) return end;
    await new Promise<void>((resolve) => this.onExit(resolve));
    return "exited";
  }

  /** Ends a conditional wait without a match: output stays where it is, for this read or the next. */
  endWatch(): void {
    this.output.stopWatch();
  }

  /** Whether the job seems blocked reading its own stdin, and which signal says so. */
  inputWait(lastLine: string = this.output.lastLine, holders?: InputWaitQuery["holders"]): InputWait {
    if (this.pid === undefined || this.end.state !== "running") return { likely: false };
    // A program that keeps repainting its screen (top reads its keys between repaints) moves by itself.
    if (this.screen?.repainting && this.output.quietMs() < REPAINTING_QUIET_MS) return { likely: false };
    const query = { pid: this.pid, stdin: this.transport.stdinIdentity, tty: this.tty, lastLine, quietMs: this.output.quietMs(), holders };
    const wait = probeInputWait(query);
    if (!wait.likely) return wait;
    // A pipe job waiting with no prompt on its last line may print its prompt only to a terminal.
    return { ...wait, promptShown: looksLikePrompt(lastLine) };
  }

  /** Whether the job's terminal hides what is typed now (a secret prompt), read fresh; undefined on pipes, off Linux, or unread. */
  async hidesTyping(): Promise<boolean | undefined> {
    if (!this.tty || this.ending) return undefined;
    const motion = this.motion;
    const seq = ++this.hidingReads;
    const hidden = await terminalHidesTyping(this.transport.stdinIdentity);
    if (seq > (this.hidingRead?.seq ?? 0)) this.hidingRead = { motion, hidden, seq };
    return hidden;
  }

  /**
   * The terminal's flag as last read, while the job has not moved since (no output, no input);
   * otherwise undefined, and a read starts for the next to ask (a listing cannot wait for it).
   */
  knownHidesTyping(): boolean | undefined {
    if (this.hidingRead?.motion === this.motion) return this.hidingRead.hidden;
    if (this.tty && !this.ending && !this.readingHiding)
      this.readingHiding = this.hidesTyping().finally(() => {
        this.readingHiding = undefined;
      });
    return undefined;
  }

  private get motion(): string {
    return `${this.output.bytesTotal}:${this.stdin.movements}`;
  }

  /** Model text of the output retained since the previous read; the buffer starts over. */
  takeOutput(): OutputDelta {
    return this.output.take(this.final !== undefined);
  }

  /** The screen a result shows instead of the stream, if any (see {@link JobScreen.view}). */
  async screenView(asked: boolean | undefined): Promise<ScreenView | undefined> {
    return this.screen?.view(asked);
  }

  /** A PTY job's screen now and how its program wants keys sent, for a person typing into it. */
  liveScreen(): ReturnType<JobScreen["live"]> | undefined {
    return this.screen?.closed ? undefined : this.screen?.live();
  }

  /**
   * Starts a call's conditional wait on what arrives (and what is unread) and on the job's sockets
   * (`readListening`: one scan of this job): `met` resolves with the condition that ends it.
   */
  watchUntil(spec: UntilSpec, readListening?: ListenReader): CallWait {
    const onSuspend = () => this.holders.noteSuspended("until_pattern");
    const wait = new CallWait(spec, { partialLine: this.output.lastLine, readListening, onSuspend });
    this.output.startWatch(wait);
    return wait;
  }

  /** Never throws (see {@link JobStdin}). */
  send(input: JobInput, deadlineMono: number): Promise<InputOutcome> {
    return this.stdin.send(input, deadlineMono);
  }

  /** The child gets SIGWINCH. PTY jobs only; the caller checks. */
  resize(size: { cols: number; rows: number }): void {
    if (!this.transport.resize) throw new Error(`job ${this.id} has no terminal to resize`);
    this.transport.resize(size.cols, size.rows);
    this.screen?.resize(size.cols, size.rows);
    this.size = { cols: size.cols, rows: size.rows };
  }

  /** Every group a signal to this job must reach: its session's, the leader's first. */
  groups(): number[] {
    return this.groupsEnded ? [] : this.transport.groups();
  }

  noteGroupsEnded(): void {
    if (this.final) this.groupsEnded = true;
  }

  /** A descendant may still print. */
  get streamsOpen(): boolean {
    return !this.end.streamsClosed;
  }

  /** Shutdown, after the processes were stopped: `closed` follows. */
  closeStreams(): void {
    this.transport.close();
  }

  /** Once the shell exits, whether or not the job ends with it (at once if it has). */
  onShellExit(listener: () => void): void {
    if (this.leaderExited) listener();
    else this.shellExitListeners.add(listener);
  }

  /** Once the exit is final (at once if it is); returns an unsubscribe. */
  onExit(listener: () => void): () => void {
    if (this.final) {
      listener();
      return () => {};
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /**
   * Who is about to stop the job, with which signal (shutdown signals its groups from outside). The
   * first reason wins; a job that ended already keeps its own exit.
   */
  recordStop(reason: StopReason, signal: NodeJS.Signals = "SIGTERM", note?: string): void {
    if ((this.end.state === "running" || this.end.state === "background") && this.stopReason === undefined) {
      this.stopReason = reason;
      this.stopNote = note;
    }
    if (this.end.state === "background") this.backgroundStop = signal;
  }

  /** Someone asked to stop the job (it may still be running). */
  get stopRequested(): boolean {
    return this.stopReason !== undefined;
  }

  /** Stops the job with escalation and evidence (see {@link stopJob}). */
  terminate(signal: NodeJS.Signals, reason: StopReason, note?: string): Promise<Termination> {
    this.recordStop(reason, signal, note);
    return stopJob(this, signal, (sig) => {
      this.recordStop(reason, sig);
      return this.transport.signal(sig);
    });
  }

  private onData(chunk: Buffer): void {
    this.output.push(chunk);
    this.atLineStart = chunk[chunk.length - 1] === 0x0a;
    this.holders.printed(chunk);
    this.screen?.write(chunk);
    this.end.data();
    if (!this.log.write(chunk) && !this.end.paused) {
      // Backpressure: the child blocks on a full pipe until the disk catches up.
      this.transport.pause();
      this.end.pause();
    }
  }

  private resumeAfterLog(): void {
    if (!this.end.paused) return;
    this.transport.resume();
    this.end.resume();
  }

  private onLeaderExit(exit: LeaderExit): void {
    this.end.leaderExited(exit, exit.error && `could not start ${this.program} in ${this.cwd}: ${exit.error.message}`);
    for (const listener of this.shellExitListeners) listener();
    this.shellExitListeners.clear();
  }

  private onClosed(): void {
    this.log.close();
    this.end.closed();
  }

  private finish(failure?: string): void {
    if (this.finishing) return;
    this.finishing = true;
    void this.fixExit(failure);
  }

  private async fixExit(failure: string | undefined): Promise<void> {
    this.end.fixing();
    clearTimeout(this.deadlineTimer);
    this.stdin.close();
    // The exit is reported with the log complete up to it; with nothing on its way to disk, in this turn.
    this.log.appendTail();
    const flushing = this.log.flushedWithin(LOG_FLUSH_ON_EXIT_MS);
    if (flushing) await flushing;
    // A stop that ended what the shell left ended the job: its exit is the stop's signal, not the shell's code.
    const ended = this.backgroundStop ? { code: null, signal: this.backgroundStop } : this.end.leaderExit!;
    failure = [failure, this.stopNote].filter(Boolean).join("; ") || undefined;
    this.final = {
      exitCode: exitCodeOf(ended),
      signal: ended.signal,
      ...(failure ? { failure } : {}),
      ...(this.stopReason ? { stoppedBy: this.stopReason } : {}),
    };
    this.end.state = "final";
    this.exitedMono = performance.now();
    this.screen?.close();
    this.holders.close();
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener();
  }
}

/** Why a wait ended: `aborted` is the call's cancel (Esc), `steered` the user's message, `background` the shell's exit with processes left. */
export type WaitEnd = "exited" | "deadline" | "aborted" | "steered" | "matched" | "quiet" | "listening" | "background";

/** What else may end a wait besides the exit and the deadline. */
export interface WaitEnds {
  signal?: AbortSignal | undefined;
  steer?: AbortSignal | undefined;
  condition?: Promise<ConditionEnd> | undefined;
  /** Subscribes to the shell's exit leaving processes running (after a short settle); returns an unsubscribe. */
  background?: ((listener: () => void) => () => void) | undefined;
}

/** What a wait needs of a job: whether its exit is final, and a call when it becomes final (returns an unsubscribe). */
export interface ExitSource {
  readonly exit: unknown;
  onExit(listener: () => void): () => void;
}

/**
 * Waits for the exit, the monotonic deadline or one of `ends`. Output alone never ends a wait (a
 * REPL call would return just its echo), and a cancel or steer ends the wait, never the job. When
 * several are ready at once the exit wins: no caller reports "running" for a job that is gone.
 */
export function waitForExit(job: ExitSource, deadlineMono: number, ends: WaitEnds = {}): Promise<WaitEnd> {
  const { signal, steer, condition, background } = ends;
  if (job.exit) return Promise.resolve("exited");
  if (signal?.aborted) return Promise.resolve("aborted");
  if (steer?.aborted) return Promise.resolve("steered");
  return new Promise<WaitEnd>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const arm = () => {
      const remaining = deadlineMono - performance.now();
      if (remaining <= 0) return settle("deadline");
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    };
    const settle = (end: WaitEnd) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      unsubscribeBackground?.();
      signal?.removeEventListener("abort", onAbort);
      steer?.removeEventListener("abort", onSteer);
      resolve(job.exit ? "exited" : end);
    };
    const onAbort = () => settle("aborted");
    const onSteer = () => settle("steered");
    const unsubscribe = job.onExit(() => settle("exited"));
    const unsubscribeBackground = background?.(() => settle("background"));
    signal?.addEventListener("abort", onAbort, { once: true });
    steer?.addEventListener("abort", onSteer, { once: true });
    void condition?.then(settle);
    arm();
  });
}
