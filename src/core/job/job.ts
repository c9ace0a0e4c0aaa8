/*
 * job/ — one job's life and every view of it: the state machine (this file), output, stdin, stop with
 * escalation, the exit drain, waits, the snapshot every result reads, progress, and the registry of
 * a runtime's jobs.
 *
 * May import: shared, output, screen, processes, conditions, log, completion, transport, request.
 */
import { constants as osConstants } from "node:os";
import { ConditionWatch } from "../conditions/condition-watch.ts";
import { type InputWait, probeInputWait } from "../conditions/input-wait.ts";
import type { PatternHit } from "../conditions/pattern-watch.ts";
import type { UntilSpec } from "../conditions/until-conditions.ts";
import type { LinePattern } from "../conditions/until-pattern.ts";
import type { JobLog } from "../log/job-log.ts";
import type { ShownPart } from "../output/shown-part.ts";
import type { JobInput } from "../request/input.ts";
import { JobScreen, type ScreenView } from "../screen/job-screen.ts";
import { LOG_FLUSH_ON_EXIT_MS, TYPED_DELIVERY_MS } from "../shared/constants.ts";
import type { LeaderExit, Transport } from "../transport/types.ts";
import { ExitDrain } from "./exit-drain.ts";
import { JobHolders, type TypingReport, type TypingSession } from "./job-holders.ts";
import { JobOutput, type OutputDelta } from "./job-output.ts";
import { type InputOutcome, JobStdin } from "./job-stdin.ts";
import { stopJob, type Termination } from "./job-stop.ts";
import type { JobExit, JobSpec, StopReason } from "./job-types.ts";
import { type WaitEnd, type WaitEnds, waitForExit } from "./wait.ts";

export type { JobExit, JobSpec, StepPlan, StepResult, StopReason } from "./job-types.ts";

/**
 * One command's process and everything known about it, in three states: `running` (the leader
 * lives), `draining` (the leader exited; its last output is still being read, see
 * {@link ExitDrain}), `final` (the exit is fixed and reported to listeners). Its output goes to
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
  private state: "running" | "draining" | "final" = "running";
  private readonly transport: Transport;
  private readonly log: JobLog;
  private readonly output: JobOutput;
  private readonly stdin: JobStdin;
  /** PTY jobs: the terminal's screen, fed from spawn. */
  private readonly screen: JobScreen | undefined;
  private readonly drain = new ExitDrain(() => void this.finish());
  private readonly deadlineTimer: NodeJS.Timeout;
  private size: { cols: number; rows: number } | undefined;
  private leaderExit: LeaderExit | undefined;
  private final: JobExit | undefined;
  private finishing: Promise<void> | undefined;
  private stopReason: StopReason | undefined;
  /** True while output reading is paused for the log to catch up. */
  private pausedForLog = false;
  /** The transport said `closed`: nothing more will be read. */
  private streamsClosed = false;
  /** Every group of the job was seen empty after its exit; their ids may be reused from then on. */
  private groupsEnded = false;
  private readonly exitListeners = new Set<() => void>();
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
    this.holders = new JobHolders(spec.id);
    const stopOnQuota = spec.logs.config.onQuota === "stop";
    this.log = spec.logs.open(spec.id, {
      drain: () => this.resumeAfterLog(),
      quotaReached: () => {
        if (stopOnQuota) void this.terminate("SIGTERM", "log_quota");
      },
    });
    this.size = spec.terminal && { cols: spec.terminal.cols, rows: spec.terminal.rows };
    this.transport = spec.transport({
      data: (chunk) => this.onData(chunk),
      exit: (exit) => this.onLeaderExit(exit),
      closed: () => this.onClosed(),
    });
    this.tty = this.transport.kind === "pty";
    this.stdin = new JobStdin(this.transport, { over: () => this.state === "final", userHolds: () => this.holders.userTyping });
    // Built now, not on the first request: it answers the program's queries and follows the alternate screen.
    const live = () => this.state !== "final";
    this.screen = this.tty && this.size ? new JobScreen(this.size, { write: (bytes) => this.transport.write(bytes), live }) : undefined;
    // Unref'd: the deadline must not keep a finished Pi alive; while the job lives, its process does.
    this.deadlineTimer = setTimeout(() => void this.terminate("SIGTERM", "timeout"), spec.timeoutMs);
    this.deadlineTimer.unref();
  }

  /** The exit, once final; undefined while the job runs (or drains its last output). */
  get exit(): JobExit | undefined {
    return this.final;
  }

  /** True once the leader has exited, even while the last output is still being drained. */
  get leaderExited(): boolean {
    return this.state !== "running";
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

  /**
   * Tests every line the job prints from now on against `pattern` while nobody holds the job (a call
   * returns its lines itself), and reports each hit; `undefined` stops watching.
   */
  watchLines(pattern: LinePattern | undefined, onHit: (hit: PatternHit) => void): void {
    this.holders.watchLines(this.state === "running" ? pattern : undefined, !this.atLineStart, onHit);
  }

  /**
   * The user takes the job's keyboard: their bytes go to its stdin after anything queued, counted and
   * never kept. Undefined when the job is over or the user holds it already.
   */
  startTyping(report: TypingReport): TypingSession | undefined {
    if (this.state !== "running") return undefined;
    return this.holders.startTyping((bytes) => this.stdin.sendTyped(bytes, performance.now() + TYPED_DELIVERY_MS), report);
  }

  /**
   * Waits until the exit is final, `deadlineMono` passes or `signal` aborts. When the wait ends while
   * the leader has exited but its last output is still draining, the exit wins: it waits for it
   * rather than report a job that is gone as running (this also keeps a job that exits inside the
   * early-exit grace from ever being published).
   */
  async wait(deadlineMono: number, ends: WaitEnds = {}): Promise<WaitEnd> {
    const end = await waitForExit(this, deadlineMono, ends);
    if (end === "exited" || !this.leaderExited) return end;
    await new Promise<void>((resolve) => this.onExit(resolve));
    return "exited";
  }

  /** Ends a conditional wait without a match: output stays where it is, for this read or the next. */
  endWatch(): void {
    this.output.stopWatch();
  }

  /** Whether the job seems blocked reading its own stdin, and which signal says so (it never acts); `lastLine` if not the returned one. */
  inputWait(lastLine: string = this.output.lastLine): InputWait {
    if (this.pid === undefined || this.state !== "running") return { likely: false };
    return probeInputWait({
      pid: this.pid,
      stdin: this.transport.stdinIdentity,
      tty: this.tty,
      lastLine,
      quietMs: this.output.quietMs(),
    });
  }

  /** Model text of the output retained since the previous read (as far as `shown` needs); the buffer starts over. */
  takeOutput(shown?: ShownPart): OutputDelta {
    return this.output.take(this.final !== undefined, shown);
  }

  /**
   * The screen a result shows instead of the stream, if any (see {@link JobScreen.view}; `true` also
   * gives the human's view: it consumes nothing). Pipes have none.
   */
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
  watchUntil(spec: UntilSpec): { met: Promise<"matched" | "quiet">; wrote(text: string): void; matchedLine(): string | undefined } {
    let resolve!: (end: "matched" | "quiet") => void;
    const met = new Promise<"matched" | "quiet">((done) => {
      resolve = done;
    });
    const watch = new ConditionWatch(spec, this.output.lastLine, (outcome) => resolve(outcome.status));
    this.output.startWatch(watch);
    return {
      met,
      wrote: (text) => watch.wrote(text),
      matchedLine: () => (watch.outcome?.status === "matched" ? watch.outcome.match.line : undefined),
    };
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
    return !this.streamsClosed;
  }

  /** Closes our end of the job's streams (shutdown, after its processes were stopped): `closed` follows. */
  closeStreams(): void {
    this.transport.close();
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
   * Records who is about to stop the job, for a stop that signals its groups from outside (shutdown).
   * The first reason wins, and a job whose leader already exited keeps its own exit.
   */
  stopping(reason: StopReason): void {
    if (this.state === "running") this.stopReason ??= reason;
  }

  /** Stops the job with escalation and evidence (see {@link stopJob}), recording who stopped it. */
  terminate(signal: NodeJS.Signals, reason: StopReason): Promise<Termination> {
    this.stopping(reason);
    const job = this;
    return stopJob(
      {
        pid: this.pid,
        get leaderExited() {
          return job.leaderExited;
        },
        get final() {
          return job.final !== undefined;
        },
        groups: () => this.groups(),
        signal: (sig) => this.transport.signal(sig),
      },
      signal,
    );
  }

  private onData(chunk: Buffer): void {
    this.output.push(chunk);
    this.atLineStart = chunk[chunk.length - 1] === 0x0a;
    this.holders.printed(chunk);
    this.screen?.write(chunk);
    this.drain.data();
    if (!this.log.write(chunk) && !this.pausedForLog) {
      // Backpressure: the child blocks on a full pipe until the disk catches up.
      this.pausedForLog = true;
      this.transport.pause();
      this.drain.pause();
    }
  }

  private resumeAfterLog(): void {
    if (!this.pausedForLog) return;
    this.pausedForLog = false;
    this.transport.resume();
    this.drain.resume();
  }

  private onLeaderExit(exit: LeaderExit): void {
    this.leaderExit = exit;
    this.state = "draining";
    if (exit.error) {
      void this.finish(`could not start ${this.program} in ${this.cwd}: ${exit.error.message}`);
      return;
    }
    this.drain.start(this.pausedForLog);
  }

  private onClosed(): void {
    this.streamsClosed = true;
    this.log.close();
    this.drain.cancel();
    if (this.state === "draining") void this.finish();
  }

  /** Fixes the exit once the output is drained, with the log complete up to it, and tells the listeners. */
  private finish(failure?: string): Promise<void> {
    this.finishing ??= this.fixExit(failure);
    return this.finishing;
  }

  private async fixExit(failure: string | undefined): Promise<void> {
    this.drain.cancel();
    clearTimeout(this.deadlineTimer);
    this.stdin.close();
    // The exit is reported with the log complete up to it, so the model can read the log at once.
    this.log.appendTail();
    let timer: NodeJS.Timeout | undefined;
    const hungDisk = new Promise((resolve) => {
      timer = setTimeout(resolve, LOG_FLUSH_ON_EXIT_MS);
    });
    await Promise.race([this.log.flushed(), hungDisk]);
    clearTimeout(timer);
    const { code, signal } = this.leaderExit!;
    this.final = {
      exitCode: code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : null),
      signal,
      ...(failure ? { failure } : {}),
      ...(this.stopReason ? { stoppedBy: this.stopReason } : {}),
    };
    this.state = "final";
    this.exitedMono = performance.now();
    this.screen?.close();
    this.holders.close();
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener();
  }
}
