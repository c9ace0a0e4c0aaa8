import { constants as osConstants } from "node:os";
import { GROUP_PROBE_INTERVAL_MS, KILL_CONFIRM_MS, KILL_GRACE_MS, LOG_FLUSH_ON_EXIT_MS, MAX_YIELD_MS, PREVIEW_BYTES } from "./constants.ts";
import { ExitDrain } from "./exit-drain.ts";
import { HeadTailBuffer } from "./head-tail-buffer.ts";
import type { JobInput } from "./input.ts";
import { InputQueue } from "./input-queue.ts";
import type { JobLog, LogDirectory } from "./job-log.ts";
import { continuationPrefix, OutputDecoder } from "./output-decoder.ts";
import { aliveGroups } from "./process-group.ts";
import { descendantsOf, livingPids } from "./process-table.ts";
import type { TerminalSize } from "./terminal-size.ts";
import { PipeTransport } from "./transport/pipe.ts";
import { loadPtyModule, spawnPty } from "./transport/pty.ts";
import type { LeaderExit, SpawnSpec, Transport, TransportEvents } from "./transport/types.ts";

export type JobStatus = "running" | "exited";

/**
 * Who stopped a job, when something did (rather than the job ending by itself): `killed` the model
 * (`kill_session`), `user` the human (the sessions picker), `timeout` its `timeout_s` deadline,
 * `log_quota` its log quota (with PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop), `boundary` a session boundary
 * or a runtime given up after `/reload`.
 */
export type StopReason = "killed" | "user" | "timeout" | "log_quota" | "boundary";

export interface JobSpec extends SpawnSpec {
  id: number;
  /** The command as the model wrote it (for reports; the transport runs `file args`). */
  command: string;
  logs: LogDirectory;
  /** Run on a PTY of this size; pipes when absent. */
  terminal?: TerminalSize;
  /** Hard deadline: the job is stopped this long after spawn, whether or not anyone waits on it. */
  timeoutMs: number;
}

/** Final state of a job, fixed once the exit is known and the output drained. */
export interface JobExit {
  /** The leader's exit code; for a death by signal, 128 + the signal number, as a shell reports it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the job never ran, or failed in a way the exit code cannot say. */
  failure?: string;
  /** Set when the runtime stopped the job, and why. */
  stoppedBy?: StopReason;
}

/** Output of one read: model text since the previous read, and the bytes retention dropped. */
export interface OutputDelta {
  text: string;
  omittedBytes: number;
}

/** What a `send` did: the kind of input, what is still waiting or was refused, and why it failed if it did. */
export interface InputOutcome {
  input: "bytes" | "interrupt" | "eof";
  failure?: string;
  /** Bytes of the job's stdin the child has not read yet (this call's and earlier ones'). */
  pendingBytes?: number;
  /** Bytes of this input that did not fit in the job's bounded stdin within the call's window. */
  refusedBytes?: number;
}

/**
 * Evidence of a stop. `cleanup`: `pending` when even the leader's exit was not seen; `confirmed` only
 * when the job's process groups are proven empty and every descendant seen before the signal is gone;
 * `unconfirmed` otherwise (a descendant left the group with setsid, or the platform cannot tell).
 */
export interface Termination {
  signal: NodeJS.Signals;
  escalated: boolean;
  cleanup: "pending" | "unconfirmed" | "confirmed";
  /** Descendants seen before the signal that are still alive (they escaped the process group). */
  survivors: number[];
  /** Why a signal could not be sent; the job may still be running. */
  failure?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One command's process and everything known about it: state, output retained between reads, the
 * log of every byte, its bounded stdin, its hard deadline, and the exit. The exit is the leader's
 * exit, reported once the output streams close or the stream has been quiet after it (see
 * {@link ExitDrain}), so a backgrounded descendant that keeps the pipe open never delays it for long;
 * output arriving later is still logged, retained and counted.
 */
export class Job {
  readonly id: number;
  readonly command: string;
  readonly cwd: string;
  /** Wall-clock start (epoch ms), for display. */
  readonly startedAt = Date.now();
  /** Monotonic start (performance.now()), for every duration. */
  readonly startedMono = performance.now();
  /** Monotonic time of the hard deadline. */
  readonly deadlineMono: number;
  private readonly transport: Transport;
  private size: { cols: number; rows: number } | undefined;
  private readonly log: JobLog;
  private readonly output = new HeadTailBuffer();
  private readonly decoder = new OutputDecoder();
  /** The latest output, for the UI only: reading it never drains what the model reads. */
  private readonly preview = new HeadTailBuffer(PREVIEW_BYTES, 0);
  private totalBytes = 0;
  private lastOutputMono: number | undefined;
  private leaderExit: LeaderExit | undefined;
  private final: JobExit | undefined;
  private finishing = false;
  private readonly drain = new ExitDrain(() => void this.finish());
  private readonly input: InputQueue;
  private readonly deadlineTimer: NodeJS.Timeout;
  private stopReason: StopReason | undefined;
  /** True while output reading is paused for the log to catch up. */
  private pausedForLog = false;
  /** The transport said `closed`: nothing more will be read. */
  private streamsClosed = false;
  /** Every group of the job was seen empty after its exit; their ids may be reused from then on. */
  private groupsEnded = false;
  private readonly exitListeners = new Set<() => void>();
  /** The call attached to this job, if any: only one reads or writes at a time. */
  private attachedCall: string | undefined;

  constructor(spec: JobSpec) {
    this.id = spec.id;
    this.command = spec.command;
    this.cwd = spec.cwd;
    this.deadlineMono = this.startedMono + spec.timeoutMs;
    const stopOnQuota = spec.logs.config.onQuota === "stop";
    this.log = spec.logs.open(spec.id, {
      drain: () => this.resumeAfterLog(),
      quotaReached: () => {
        if (stopOnQuota) void this.terminate("SIGTERM", "log_quota");
      },
    });
    const events: TransportEvents = {
      data: (chunk) => this.onData(chunk),
      exit: (exit) => {
        this.leaderExit = exit;
        if (exit.error) {
          void this.finish(`could not start ${spec.file} in ${spec.cwd}: ${exit.error.message}`);
          return;
        }
        this.drain.start(this.pausedForLog);
      },
      closed: () => {
        this.streamsClosed = true;
        this.log.close();
        this.drain.cancel();
        if (this.leaderExit) void this.finish();
      },
    };
    if (spec.terminal) {
      this.size = { cols: spec.terminal.cols, rows: spec.terminal.rows };
      this.transport = spawnPty({ ...spec, ...this.size }, events, loadPtyModule(spec.env));
    } else {
      this.transport = new PipeTransport(spec, events);
    }
    this.input = new InputQueue(this.transport);
    // Unref'd: the deadline must not keep a finished Pi alive; while the job lives, its process does.
    this.deadlineTimer = setTimeout(() => void this.terminate("SIGTERM", "timeout"), spec.timeoutMs);
    this.deadlineTimer.unref();
  }

  get status(): JobStatus {
    return this.final ? "exited" : "running";
  }

  /** The exit, once final; undefined while the job runs (or drains its last output). */
  get exit(): JobExit | undefined {
    return this.final;
  }

  /** True once the leader has exited, even while the last output is still being drained. */
  get leaderExited(): boolean {
    return this.leaderExit !== undefined;
  }

  /** True for a job on a PTY. */
  get tty(): boolean {
    return this.transport.kind === "pty";
  }

  /** The PTY's current size; undefined on pipes. */
  get terminalSize(): { cols: number; rows: number } | undefined {
    return this.size && { ...this.size };
  }

  get pid(): number | undefined {
    return this.transport.pid;
  }

  /** The leader's process group (the leader starts its own). */
  get pgid(): number | undefined {
    return this.transport.pid;
  }

  /** Where every byte of output is mirrored. */
  get logPath(): string {
    return this.log.path;
  }

  /** Why the log is incomplete, if it is. */
  get logPartialReason(): string | undefined {
    return this.log.partialReason;
  }

  /** Why the runtime is stopping or stopped the job, if it did. */
  get stoppedBy(): StopReason | undefined {
    return this.stopReason;
  }

  /** Every output byte since spawn, including bytes retention dropped. */
  get outputBytesTotal(): number {
    return this.totalBytes;
  }

  /** Milliseconds since the last output byte (since spawn when there was none). */
  quietMs(nowMono: number = performance.now()): number {
    return Math.max(0, Math.round(nowMono - (this.lastOutputMono ?? this.startedMono)));
  }

  /** The call attached to the job, if any. */
  get attached(): string | undefined {
    return this.attachedCall;
  }

  /** Attaches `call`; false when another call is attached already. */
  attach(call: string): boolean {
    if (this.attachedCall) return false;
    this.attachedCall = call;
    return true;
  }

  detach(): void {
    this.attachedCall = undefined;
  }

  /**
   * The latest output for a live preview: at most the last {@link PREVIEW_BYTES}, and only what
   * arrived after byte `sinceTotal` of the stream (so a call previews its own output). Terminal
   * controls are stripped; it drains nothing.
   */
  previewText(sinceTotal = 0): string {
    const want = Math.min(PREVIEW_BYTES, this.totalBytes - sinceTotal);
    if (want <= 0) return "";
    const { tail } = this.preview.snapshot();
    const bytes = tail.subarray(Math.max(0, tail.length - want));
    return new OutputDecoder().take({ head: Buffer.alloc(0), tail: bytes.subarray(continuationPrefix(bytes)), omittedBytes: 0 }, true);
  }

  /** Model text of the output retained since the previous call; the buffer starts over. */
  takeOutput(): OutputDelta {
    const retained = this.output.drain();
    return { text: this.decoder.take(retained, this.final !== undefined), omittedBytes: retained.omittedBytes };
  }

  /**
   * Sends input, within the call's window. On pipes: bytes to stdin, Ctrl-C as SIGINT to the process
   * group, Ctrl-D as EOF (after the bytes queued before it). On a PTY every byte goes to the terminal,
   * whose line discipline gives Ctrl-C and Ctrl-D their meaning (or passes them on, to a program in raw
   * mode). Bytes go through the job's bounded stdin: the call waits until its bytes are handed to the
   * OS or `deadlineMono` passes (by default the longest window a call has), then says what still waits
   * and what did not fit. Never throws.
   */
  async send(input: JobInput, deadlineMono: number = performance.now() + MAX_YIELD_MS): Promise<InputOutcome> {
    const kind = this.tty ? "bytes" : input.kind;
    if (this.final) return { input: kind, failure: "stdin write failed: the job has already exited" };
    if (!this.tty && input.kind === "interrupt") {
      try {
        this.transport.signal("SIGINT");
        return { input: kind };
      } catch (error) {
        return { input: kind, failure: `stdin write failed: ${(error as Error).message}` };
      }
    }
    if (!this.tty && input.kind === "eof") {
      this.input.end();
      return this.inputOutcome(kind, 0);
    }
    const bytes = inputBytes(input);
    let offset = this.input.offer(bytes);
    while (offset < bytes.length && !this.input.failed && (await this.inputChanged(deadlineMono))) {
      offset += this.input.offer(bytes.subarray(offset));
    }
    // The call's own bytes are delivered when the OS has everything up to the last of them.
    const end = this.input.accepted;
    while (this.input.flushed < end && !this.input.failed && (await this.inputChanged(deadlineMono)));
    return this.inputOutcome(kind, bytes.length - offset);
  }

  /** Waits for the input queue to change; false once the deadline passed or the job is over. */
  private async inputChanged(deadlineMono: number): Promise<boolean> {
    if (this.final || performance.now() >= deadlineMono) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadlineMono - performance.now()));
    });
    try {
      return await Promise.race([this.input.changed().then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private inputOutcome(kind: InputOutcome["input"], refusedBytes: number): InputOutcome {
    const pendingBytes = this.input.pendingBytes;
    const failure = this.input.failed
      ? this.input.failed
      : refusedBytes > 0
        ? `stdin is full: the job has not read ${pendingBytes} bytes yet, so ${refusedBytes} bytes of this input were refused; ` +
          "send them again once it reads (for bulk data, give the command a file instead)"
        : undefined;
    return {
      input: kind,
      ...(failure ? { failure } : {}),
      ...(pendingBytes > 0 ? { pendingBytes } : {}),
      ...(refusedBytes > 0 ? { refusedBytes } : {}),
    };
  }

  /** Resizes the job's PTY (the child gets SIGWINCH). Only for PTY jobs; the caller checks. */
  resize(size: { cols: number; rows: number }): void {
    if (!this.transport.resize) throw new Error(`job ${this.id} has no terminal to resize`);
    this.transport.resize(size.cols, size.rows);
    this.size = { cols: size.cols, rows: size.rows };
  }

  /** Every process group a signal to this job must reach: its session's groups, the leader's first. */
  groups(): number[] {
    return this.groupsEnded ? [] : this.transport.groups();
  }

  /** Closes our end of the job's streams (shutdown, after its processes were stopped): `closed` follows. */
  closeStreams(): void {
    this.transport.close();
  }

  /** The runtime saw every group of the exited job empty: they are never named again. */
  noteGroupsEnded(): void {
    if (this.final) this.groupsEnded = true;
  }

  /** Our end of the job's streams is still open (a descendant may still print). */
  get streamsOpen(): boolean {
    return !this.streamsClosed;
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
    if (!this.leaderExit) this.stopReason ??= reason;
  }

  /** Signals the job's process groups once. False when they are already empty; throws when it cannot. */
  signal(signal: NodeJS.Signals): boolean {
    return this.transport.signal(signal);
  }

  /**
   * Stops the job: `signal` to its groups, SIGKILL after {@link KILL_GRACE_MS} if anything of it is
   * left (SIGKILL itself skips the grace), then a bounded wait for the kernel to confirm. Reports
   * whether it escalated and what is known of the cleanup; a signal that cannot be sent is a failure.
   */
  async terminate(signal: NodeJS.Signals, reason: StopReason): Promise<Termination> {
    this.stopping(reason);
    // Seen before the signal, so a descendant that escapes the group (setsid) can still be accounted for.
    const descendants = this.pid !== undefined && !this.leaderExit ? descendantsOf(this.pid) : [];
    let failure: string | undefined;
    const send = (sig: NodeJS.Signals) => {
      try {
        this.transport.signal(sig);
      } catch (error) {
        failure ??= `${sig} could not be sent: ${(error as Error).message}`;
      }
    };
    send(signal);
    let escalated = false;
    if (signal !== "SIGKILL" && !failure && !(await this.gone(KILL_GRACE_MS))) {
      send("SIGKILL");
      escalated = true;
    }
    const gone = failure ? false : await this.gone(KILL_CONFIRM_MS);
    const survivors = livingPids(descendants);
    const cleanup = !this.final ? "pending" : gone && survivors.length === 0 && process.platform !== "win32" ? "confirmed" : "unconfirmed";
    return { signal, escalated, cleanup, survivors, ...(failure ? { failure } : {}) };
  }

  /** Waits up to `timeoutMs` for the exit to be final and every group of the job to be empty. */
  private async gone(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (this.final && aliveGroups(this.groups()).length === 0) return true;
      if (performance.now() >= deadline) return false;
      await sleep(Math.min(GROUP_PROBE_INTERVAL_MS, Math.max(1, deadline - performance.now())));
    }
  }

  private onData(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    this.lastOutputMono = performance.now();
    this.output.push(chunk);
    this.preview.push(chunk);
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

  private async finish(failure?: string): Promise<void> {
    if (this.final || this.finishing || !this.leaderExit) return;
    this.finishing = true;
    this.drain.cancel();
    clearTimeout(this.deadlineTimer);
    // Input nobody will read any more is dropped; a call waiting on it returns.
    this.input.dispose("stdin write failed: the job has exited");
    // The exit is reported with the log complete up to it, so the model can read the log at once.
    this.log.appendTail();
    let timer: NodeJS.Timeout | undefined;
    const hungDisk = new Promise((resolve) => {
      timer = setTimeout(resolve, LOG_FLUSH_ON_EXIT_MS);
    });
    await Promise.race([this.log.flushed(), hungDisk]);
    clearTimeout(timer);
    const { code, signal } = this.leaderExit;
    this.final = {
      exitCode: code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : null),
      signal,
      ...(failure ? { failure } : {}),
      ...(this.stopReason ? { stoppedBy: this.stopReason } : {}),
    };
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener();
  }
}

/** The bytes a terminal receives for an input: Ctrl-C and Ctrl-D are just 0x03 and 0x04 there. */
function inputBytes(input: JobInput): Buffer {
  if (input.kind === "bytes") return input.bytes;
  return Buffer.of(input.kind === "interrupt" ? 0x03 : 0x04);
}
