/*
 * job/ — one job's life and every view of it: the state machine (this file), output, stdin, stop with
 * escalation, the exit drain, waits, the snapshot every result reads, progress, and the registry of
 * a runtime's jobs.
 *
 * May import: shared, output, screen, processes, conditions, log, transport, request.
 */
import { type UntilHandle, untilWatch } from "../conditions/condition-watch.ts";
import { type InputWait, type InputWaitQuery, looksLikePrompt, probeInputWait } from "../conditions/input-wait.ts";
import { PatternBudget } from "../conditions/pattern-budget.ts";
import type { PatternWatchOptions } from "../conditions/pattern-watch.ts";
import type { UntilSpec } from "../conditions/until-conditions.ts";
import type { LinePattern } from "../conditions/until-pattern.ts";
import type { JobLog } from "../log/job-log.ts";
import type { ShownPart } from "../output/shown-part.ts";
import type { JobInput } from "../request/input.ts";
import { JobScreen, type ScreenView } from "../screen/job-screen.ts";
import { LOG_FLUSH_ON_EXIT_MS, TYPED_DELIVERY_MS } from "../shared/constants.ts";
import type { LeaderExit, Transport } from "../transport/types.ts";
import type { Background } from "./background.ts";
import { exitCodeOf, JobEnding, type ShellExit } from "./job-ending.ts";
import { JobHolders, type TypingReport, type TypingSession } from "./job-holders.ts";
import { JobOutput, type OutputDelta, type UnreadTally } from "./job-output.ts";
import { type InputOutcome, JobStdin } from "./job-stdin.ts";
import { stopJob, type Termination } from "./job-stop.ts";
import type { JobExit, JobSpec, StopReason } from "./job-types.ts";
import { type WaitEnd, type WaitEnds, waitForExit } from "./wait.ts";

/** A repainting program that printed within this long still runs by itself (top repaints every 3 s by default). */
const REPAINTING_QUIET_MS = 10_000;

export type { JobExit, JobSpec, StepPlan, StepResult, StopReason } from "./job-types.ts";

/**
 * One command's process and everything known about it, in four states (see {@link JobEnding}):
 * `running` (the leader lives), `background` (the leader exited, processes of its group — PTY:
 * session — run on), `draining` (nothing of it runs; its last output is still being read), `final`
 * (the exit is fixed and reported to listeners). Its output goes to
 * {@link JobOutput} and to its log, its input through {@link JobStdin}; its hard deadline runs on its
 * own timer. One call at a time is attached to it.
 */
export class Job {
  readonly id: number;
  readonly command: string;
  readonly cwd: string;
  /** Monotonic start (performance.now()), for every duration: the call's window, the deadline, quiet. */
  readonly startedMono: number;
  /** Monotonic time of the hard deadline. */
  readonly deadlineMono: number;
  /** Monotonic time the exit became final. */
  exitedMono: number | undefined;
  readonly tty: boolean;
  private readonly program: string;
  private readonly transport: Transport;
  private readonly log: JobLog;
  private readonly output: JobOutput;
  /** Its input side: sends go through {@link Job.send}; a listing reads how often it moved (`movements`). */
  readonly stdin: JobStdin;
  /** PTY jobs: the terminal's screen, fed from spawn. */
  private readonly screen: JobScreen | undefined;
  private readonly end: JobEnding;
  private readonly deadlineTimer: NodeJS.Timeout;
  private size: { cols: number; rows: number } | undefined;
  private final: JobExit | undefined;
  /** The exit is being fixed (once): it may finish within the call that starts it, so the flag is set first. */
  private finishing = false;
  private stopReason: StopReason | undefined;
  /** The latest signal a stop sent while the shell's background ran on: the job ended by it, not by the shell's exit. */
  private backgroundStop: NodeJS.Signals | undefined;
  /** Every group of the job was seen empty after its exit; their ids may be reused from then on. */
  private groupsEnded = false;
  private readonly exitListeners = new Set<() => void>();
  private readonly shellExitListeners = new Set<() => void>();
  /** Who holds the job: the model's one attached call, the user typing; the pattern watch between them. */
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

  /** The exit, once final; undefined while the job runs (or drains its last output). */
  get exit(): JobExit | undefined {
    return this.final;
  }

  /** True once the leader has exited, even while processes it left run on or the last output is drained. */
  get leaderExited(): boolean {
    return this.end.state !== "running";
  }

  /** Nothing of the job runs any more: its exit is final or about to be (its last output is being read). */
  get ending(): boolean {
    return this.end.state === "draining" || this.end.state === "final";
  }

  /**
   * While the shell's exit left processes running: its exit (the job's exit code to be) and what runs
   * on, looked up now (names withheld once a person typed into the job), or as the call's wait last
   * looked (`fresh` false); undefined otherwise. `told`: a result shows it to the model, so later
   * waits no longer end at the shell's exit.
   */
  backgroundNow(told = false, fresh = true): { shellExit: ShellExit; processes: Background } | undefined {
    const processes = this.end.backgroundNow(this.holders.typedInto, fresh);
    const shellExit = this.end.shellExit;
    if (told && processes) this.end.backgroundReported();
    return shellExit && processes ? { shellExit, processes } : undefined;
  }

  /** The leader's pid, which is also its process group and session id; undefined when it never started. */
  get pid(): number | undefined {
    return this.transport.pid;
  }

  /** The PTY's current size; undefined on pipes. */
  get terminalSize(): { cols: number; rows: number } | undefined {
    return this.size && { ...this.size };
  }

  /** Where every byte of output is mirrored. */
  get logPath(): string {
    return this.log.path;
  }

  /** Why the log is incomplete, if it is. */
  get logPartialReason(): string | undefined {
    return this.log.partialReason;
  }

  /** Every output byte since spawn, including bytes retention dropped. */
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

  /** Milliseconds since the last output byte (since spawn when there was none). */
  quietMs(nowMono: number = performance.now()): number {
    return this.output.quietMs(nowMono);
  }

  /** Bytes of the stream up to where the last read ended. */
  get outputBytesRead(): number {
    return this.output.bytesRead;
  }

  /** The latest output for a live preview, after byte `sinceTotal`; it drains nothing. */
  previewText(sinceTotal = 0): string {
    return this.output.previewText(sinceTotal);
  }

  /** The model's call lets go of the job: the pattern watch goes on with what the call left unread. */
  detachCall(): void {
    this.holders.detach(() => this.output.unread());
  }

  /** The call attached to the job, if any. */
  get attached(): string | undefined {
    return this.holders.attached;
  }

  /** Tests the job's later lines against `pattern` while nobody holds it, reporting each hit; `undefined` stops. */
  watchLines(pattern: LinePattern | undefined, hooks: Pick<PatternWatchOptions, "onHit" | "judgedThrough" | "onSuspend">): void {
    // One budget pays for both testers of the pattern, the wake's watch and the reads' matcher (which
    // tests every line whoever holds the job): when it runs out, both stop and the model is told once.
    const budget = pattern && new PatternBudget(() => performance.now());
    const look = this.output.watchReads(pattern, budget);
    const options = { ...hooks, midLine: !this.atLineStart, startAt: this.output.bytesTotal, ...(budget ? { budget, look } : {}) };
    this.holders.watchLines(this.ending ? undefined : pattern, options);
  }

  /**
   * The user takes the job's keyboard: their bytes go to its stdin after anything queued, counted and
   * never kept. Undefined when the job is over or the user holds it already.
   */
  startTyping(report: TypingReport): TypingSession | undefined {
    if (this.end.state !== "running") return undefined;
    return this.holders.startTyping((bytes) => this.stdin.sendTyped(bytes, performance.now() + TYPED_DELIVERY_MS), report);
  }

  /**
   * Waits until the exit is final, `deadlineMono` passes or `signal` aborts. When the wait ends while
   * the leader has exited but its last output is still draining, the exit wins: it waits for it
   * rather than report a job that is gone as running (this also keeps a job that exits inside the
   * early-exit grace from ever being published). A wait that sees the shell exit while processes it
   * left run on ends `background` once they had their settle window and still run.
   */
  async wait(deadlineMono: number, ends: WaitEnds = {}): Promise<WaitEnd> {
    const end = await waitForExit(this, deadlineMono, { ...ends, background: (listener) => this.end.onBackgroundSettled(listener) });
    // What the shell left is looked at as the wait ends, and the call's report shows that look: one
    // that finds nothing running is the job's end, which this call then waits for and reports.
    if (end !== "exited") this.end.backgroundNow(this.holders.typedInto);
    if (end === "exited" || !this.ending) return end;
    await new Promise<void>((resolve) => this.onExit(resolve));
    return "exited";
  }

  /** Ends a conditional wait without a match: output stays where it is, for this read or the next. */
  endWatch(): void {
    this.output.stopWatch();
  }

  /** Whether the job seems blocked reading its own stdin, and which signal says so (it never acts); `lastLine` if not the returned one. */
  inputWait(lastLine: string = this.output.lastLine, holders?: InputWaitQuery["holders"]): InputWait {
    if (this.pid === undefined || this.end.state !== "running") return { likely: false };
    // A program that keeps repainting its screen (top reads its keys between repaints) moves by itself.
    if (this.screen?.repainting && this.output.quietMs() < REPAINTING_QUIET_MS) return { likely: false };
    const query = { pid: this.pid, stdin: this.transport.stdinIdentity, tty: this.tty, lastLine, quietMs: this.output.quietMs(), holders };
    const wait = probeInputWait(query);
    // A pipe job waiting with no prompt on its last line may print its prompt only to a terminal.
    return wait.likely ? { ...wait, promptShown: looksLikePrompt(lastLine) } : wait;
  }

  /** Model text of the output retained since the previous read (as far as `shown` needs); the buffer starts over. */
  takeOutput(shown?: ShownPart): OutputDelta {
    return this.output.take(this.final !== undefined, shown);
  }

  /** The screen a result shows instead of the stream, if any ({@link JobScreen.view}; `true`: the human's view). */
  async screenView(asked: boolean | undefined): Promise<ScreenView | undefined> {
    return this.screen?.view(asked);
  }

  /** A PTY job's screen right now and how its program wants keys sent (a person typing into it); pipes have none. */
  liveScreen(): ReturnType<JobScreen["live"]> | undefined {
    return this.screen?.closed ? undefined : this.screen?.live();
  }

  /**
   * Starts a conditional wait on what arrives (and what is unread): `met` resolves with the condition
   * that ends it, `matchedLine` names the line. For `exec_command`, which waits in two parts.
   */
  watchUntil(spec: UntilSpec): UntilHandle {
    const { watch, handle } = untilWatch(spec, this.output.lastLine, () => this.holders.noteSuspended("until_pattern"));
    this.output.startWatch(watch);
    return handle;
  }

  /** Sends input within the window (see {@link JobStdin}); never throws. */
  send(input: JobInput, deadlineMono: number): Promise<InputOutcome> {
    return this.stdin.send(input, deadlineMono);
  }

  /** Resizes the job's PTY (the child gets SIGWINCH). Only for PTY jobs; the caller checks. */
  resize(size: { cols: number; rows: number }): void {
    if (!this.transport.resize) throw new Error(`job ${this.id} has no terminal to resize`);
    this.transport.resize(size.cols, size.rows);
    this.screen?.resize(size.cols, size.rows);
    this.size = { cols: size.cols, rows: size.rows };
  }

  /** Every process group a signal to this job must reach: its session's groups, the leader's first. */
  groups(): number[] {
    return this.groupsEnded ? [] : this.transport.groups();
  }

  /** The runtime saw every group of the exited job empty: they are never named again. */
  noteGroupsEnded(): void {
    if (this.final) this.groupsEnded = true;
  }

  /** Our end of the job's streams is still open (a descendant may still print). */
  get streamsOpen(): boolean {
    return !this.end.streamsClosed;
  }

  /** Closes our end of the job's streams (shutdown, after its processes were stopped): `closed` follows. */
  closeStreams(): void {
    this.transport.close();
  }

  /** Calls `listener` once when the leader (the shell) exits, whether or not the job ends with it (at once if it has). */
  onShellExit(listener: () => void): void {
    if (this.leaderExited) listener();
    else this.shellExitListeners.add(listener);
  }

  /** Calls `listener` once when the exit becomes final (at once if it already is). Returns an unsubscribe. */
  onExit(listener: () => void): () => void {
    if (this.final) {
      listener();
      return () => {};
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /**
   * Records who is about to stop the job and with which signal, for a stop that signals its groups
   * from outside (shutdown). The first reason wins; a job whose shell exited before the stop ends by
   * the stop's signal, a job that ended already keeps its own exit.
   */
  stopping(reason: StopReason, signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.end.state === "running" || this.end.state === "background") this.stopReason ??= reason;
    if (this.end.state === "background") this.backgroundStop = signal;
  }

  /** Stops the job with escalation and evidence (see {@link stopJob}), recording who stopped it and with what. */
  terminate(signal: NodeJS.Signals, reason: StopReason): Promise<Termination> {
    this.stopping(reason, signal);
    return stopJob(this, signal, (sig) => {
      this.stopping(reason, sig);
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

  /** Fixes the exit once the output is drained, with the log complete up to it, and tells the listeners. */
  private finish(failure?: string): void {
    if (this.finishing) return;
    this.finishing = true;
    void this.fixExit(failure);
  }

  private async fixExit(failure: string | undefined): Promise<void> {
    this.end.fixing();
    clearTimeout(this.deadlineTimer);
    this.stdin.close();
    // The exit is reported with the log complete up to it, so the model can read the log at once.
    this.log.appendTail();
    // Nothing on its way to the disk (a short job's few bytes are written by now): no turn to wait.
    const flushing = this.log.flushedWithin(LOG_FLUSH_ON_EXIT_MS);
    if (flushing) await flushing;
    // A stop that ended what the shell left ended the job: its exit is the stop's signal, not the shell's code.
    const ended = this.backgroundStop ? { code: null, signal: this.backgroundStop } : this.end.leaderExit!;
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
