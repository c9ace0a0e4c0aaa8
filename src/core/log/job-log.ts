/*
 * log/ — each job's log on disk. The flow at a glance:
 * 1. `logConfig` reads what the environment may change (the parent directory, the quotas, a stop at the quota).
 * 2. The runtime's `LogDirectory` makes a private 0700 directory on the first job; each job opens its 0600 `<id>.log`.
 * 3. A job's bytes are staged in reused buffers (`StagedWriter`): 1 MiB pending pauses the job until half is written.
 * 4. At a quota a marker is written and the last bytes are kept for the exit, as far as the runtime's tail budget lasts.
 * One file: the folder is one concern. May import: shared, output.
 */
import { createWriteStream, mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { HeadTailBuffer } from "../output/head-tail-buffer.ts";
import { JOB_LOG_QUOTA_ENV, LOG_DIR_ENV, ON_LOG_QUOTA_ENV, RUNTIME_LOG_QUOTA_ENV } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/** Log bytes queued for the disk before the job stops reading its child: a slow disk costs neither memory nor log bytes. */
export const LOG_PENDING_BYTES = 1024 * 1024;
/** Staging buffers, and how many the process keeps for reuse (2 MiB): a flood allocates nothing per chunk. */
export const LOG_STAGE_BYTES = 256 * 1024;
const LOG_STAGE_SPARE = 8;
/** Quotas: one job's log, and all logs of one runtime. */
const JOB_LOG_QUOTA_BYTES = 16 * 1024 * 1024;
const RUNTIME_LOG_QUOTA_BYTES = 256 * 1024 * 1024;
/** A partial log's last bytes kept in memory for the exit (in place of the pending allowance it no longer uses). */
export const LOG_TAIL_BYTES = 512 * 1024;
/** What all exit tails of one runtime may add beyond its quota (without it 80 jobs past the quota wrote 40 MiB more). */
export const LOG_TAIL_BUDGET_BYTES = 16 * 1024 * 1024;

/** The runtime's settings that the environment may change. */
export interface LogConfig {
  /** Where the private log directory is created. */
  parent: string;
  jobQuotaBytes: number;
  runtimeQuotaBytes: number;
  /** At a quota: keep the job running with a partial log, or stop it. */
  onQuota: "partial" | "stop";
  /** Bytes exit tails may add beyond the runtime quota; {@link LOG_TAIL_BUDGET_BYTES} unless a test sets it. */
  tailBudgetBytes?: number;
}

/** A typo must not lift a limit: anything but a whole number keeps the default. */
export function logConfig(env: NodeJS.ProcessEnv = process.env): LogConfig {
  return {
    parent: env[LOG_DIR_ENV] || tmpdir(),
    jobQuotaBytes: wholeNumber(env[JOB_LOG_QUOTA_ENV]) ?? JOB_LOG_QUOTA_BYTES,
    runtimeQuotaBytes: wholeNumber(env[RUNTIME_LOG_QUOTA_ENV]) ?? RUNTIME_LOG_QUOTA_BYTES,
    onQuota: env[ON_LOG_QUOTA_ENV]?.trim().toLowerCase() === "stop" ? "stop" : "partial",
  };
}

/**
 * Opens a log file (tests put a slow or failing disk here): exclusive (`wx`), 0600, created in the
 * caller's turn (~20 µs, not ~200 µs through the thread pool). A failed create falls back to the
 * stream's own open, so the failure arrives as its error.
 */
export type OpenLogFile = (path: string) => Writable;

export const openLogFile: OpenLogFile = (path) => {
  const options = { mode: 0o600, highWaterMark: LOG_PENDING_BYTES };
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch {
    return createWriteStream(path, { ...options, flags: "wx" });
  }
  return createWriteStream(path, { ...options, fd });
};

/** What a log tells its job. */
export interface LogEvents {
  /** The write queue has room again: resume reading the child. */
  drain(): void;
  /** A quota was reached; the log is partial from here on. */
  quotaReached(reason: string): void;
}

/** What one runtime's logs may still write, and its exit tails add on top; never reset, so both bound its directory. */
export class LogBudget {
  constructor(
    public remaining: number,
    public tailRemaining: number = LOG_TAIL_BUDGET_BYTES,
  ) {}
}

/** What a job reports as its log path when no log file could be created. */
export const NO_LOG_PATH = "none";

/** One runtime's logs: every byte a job prints, in its own file that stays after the job (activation alone writes nothing). */
export class LogDirectory {
  private dir: string | undefined;
  readonly budget: LogBudget;

  constructor(
    readonly config: LogConfig = logConfig(),
    private readonly openFile: OpenLogFile = openLogFile,
  ) {
    this.budget = new LogBudget(config.runtimeQuotaBytes, config.tailBudgetBytes ?? LOG_TAIL_BUDGET_BYTES);
  }

  /** The directory, created with mode 0700 on first use (mkdtemp makes it private and unguessable). */
  path(): string {
    this.dir ??= mkdtempSync(join(this.config.parent, "pi-unified-exec-"));
    return this.dir;
  }

  /**
   * `<id>.log`: the directory's name is random, so the file's needs no random part (the model reads the
   * path). Without a directory the job still runs, with a log that says why.
   */
  open(jobId: number, events: LogEvents): JobLog {
    let dir: string;
    try {
      dir = this.path();
    } catch (error) {
      return new JobLog(
        NO_LOG_PATH,
        undefined,
        events,
        this.config.jobQuotaBytes,
        this.budget,
        `log directory could not be created: ${(error as Error).message}`,
      );
    }
    const path = join(dir, `${jobId}.log`);
    return new JobLog(path, this.openFile(path), events, this.config.jobQuotaBytes, this.budget);
  }
}

/** One job's log file. A storage error never touches the job: the log is marked partial with the reason. */
export class JobLog {
  /** Staging and backpressure; absent when there is no file. */
  private readonly writer: StagedWriter | undefined;
  private closed = false;
  private logged = 0;
  /** Bytes the quota kept out of the file, and the last of them. */
  private unlogged = 0;
  private tail: HeadTailBuffer | undefined;
  private quotaReason: string | undefined;
  /** The tail budget was used up when the quota was reached: the marker said no tail will follow. */
  private tailRefused = false;

  constructor(
    readonly path: string,
    stream: Writable | undefined,
    private readonly events: LogEvents,
    private readonly jobQuota: number,
    private readonly budget: LogBudget,
    private failure?: string,
  ) {
    if (!stream) return;
    const writer = new StagedWriter(stream, () => events.drain());
    this.writer = writer;
    stream.on("error", (error) => {
      this.failure ??= `log write failed: ${error.message}`;
      // Nothing more will be written; whoever waits for the disk must not wait forever.
      writer.streamFailed();
    });
  }

  /** Why the log is incomplete, if it is (a storage error, or a quota). */
  get partialReason(): string | undefined {
    return this.failure ?? this.quotaReason;
  }

  /** Queues a copy of `chunk` (the caller may reuse it). False means the queue is full: pause the source until `drain`. */
  write(chunk: Buffer): boolean {
    if (!this.writer || this.failure || this.closed) return true;
    if (this.quotaReason) {
      this.keepForTail(chunk);
      return true;
    }
    const jobRoom = this.jobQuota - this.logged;
    const allowed = Math.max(0, Math.min(jobRoom, this.budget.remaining));
    if (chunk.length <= allowed) return this.enqueue(chunk);
    const reason =
      allowed === jobRoom ? `log quota reached: ${this.jobQuota} bytes per job` : "log quota reached: the Pi session's logs are full";
    let ready = this.enqueue(chunk.subarray(0, allowed));
    this.quotaReason = reason;
    this.tailRefused = this.budget.tailRemaining <= 0;
    const later = this.tailRefused
      ? `Later output is not logged, and none of it will be appended at exit: this Pi session's budget for exit tails is used up`
      : `Later output is not logged; its last ${LOG_TAIL_BYTES} bytes are appended when the job exits, as far as this Pi session's budget for exit tails lasts`;
    ready = this.enqueue(Buffer.from(`\n[pi-unified-exec: ${reason}. ${later}.]\n`), false) && ready;
    this.keepForTail(chunk.subarray(allowed));
    this.events.quotaReached(reason);
    return ready;
  }

  /**
   * Appends what the quota kept out, as far as memory held it: a marker, then the last bytes. Called
   * when the job exits, and again at close for anything a lingering descendant printed since.
   */
  appendTail(): void {
    if (this.unlogged === 0 || !this.writer || this.failure || this.closed) return;
    const unlogged = this.unlogged;
    this.unlogged = 0;
    // The quota's marker already said no tail follows: the log stays at its marker.
    if (this.tailRefused || !this.tail) return;
    const { head, tail } = this.tail.drain();
    const held = Buffer.concat([head, tail]);
    // The tail's end matters most (the final error, the summary line): what the budget cuts is its start.
    const kept = held.subarray(held.length - Math.min(held.length, Math.max(0, this.budget.tailRemaining)));
    this.budget.tailRemaining -= kept.length;
    let notice = `${unlogged} bytes were not logged; the last ${kept.length} of them follow.`;
    if (kept.length === 0)
      notice = `${unlogged} bytes were not logged; none of them follow: this Pi session's budget for exit tails is used up.`;
    else if (kept.length < held.length)
      notice = `${unlogged} bytes were not logged; the last ${kept.length} of them follow (this Pi session's budget for exit tails ran out).`;
    this.enqueue(Buffer.from(`\n[pi-unified-exec: ${notice}]\n`), false);
    this.enqueue(kept, false);
  }

  /**
   * Resolves when every byte written so far is on disk or after `ms` (a hung disk), whichever is
   * first; undefined when nothing is on its way, so a caller need not wait a turn for nothing.
   */
  flushedWithin(ms: number): Promise<void> | undefined {
    if (!this.writer || this.failure || this.writer.pending === 0) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const hungDisk = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    return Promise.race([this.flushed(), hungDisk]).finally(() => clearTimeout(timer));
  }

  /** Resolves when every byte written so far is on disk (or the log failed). */
  flushed(): Promise<void> {
    if (!this.writer || this.failure) return Promise.resolve();
    return this.writer.flushed();
  }

  /** Closes the file after the queued writes. */
  close(): void {
    if (this.closed) return;
    this.appendTail();
    this.closed = true;
    this.writer?.end();
  }

  /** Writes `bytes`; those counted against the quotas are the job's own output, not our markers. */
  private enqueue(bytes: Buffer, counted = true): boolean {
    if (counted) {
      this.logged += bytes.length;
      this.budget.remaining -= bytes.length;
    }
    if (bytes.length === 0) return true;
    return this.writer!.write(bytes);
  }

  private keepForTail(bytes: Buffer): void {
    this.unlogged += bytes.length;
    // The tail budget never grows back: a log refused its tail keeps nothing in memory for it either.
    if (this.tailRefused) return;
    this.tail ??= new HeadTailBuffer(LOG_TAIL_BYTES, 0);
    this.tail.push(bytes);
  }
}

/** Spare staging buffers of the process, shared by every log. */
const spare: Buffer[] = [];

function takeStage(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafe(LOG_STAGE_BYTES);
}

function giveBack(buffer: Buffer): void {
  if (spare.length < LOG_STAGE_SPARE) spare.push(buffer);
}

/**
 * The write side of one job's log: bytes are copied into staging buffers reused for the life of the
 * process (no log holds a read buffer; pipes reuse theirs). A buffer goes to the file when full, or at
 * once when no write is in flight. `write` says false at {@link LOG_PENDING_BYTES}; `drain` at half.
 */
export class StagedWriter {
  private stage: Buffer | undefined;
  private staged = 0;
  private inFlight = 0;
  private writes = 0;
  /** `write` said false: a drain is owed. */
  private blocked = false;
  private stopped = false;
  private readonly flushWaiters: (() => void)[] = [];

  constructor(
    private readonly stream: Writable,
    private readonly onDrain: () => void,
  ) {}

  /** Bytes staged or being written. */
  get pending(): number {
    return this.staged + this.inFlight;
  }

  /** Copies `bytes` for the file. False means: pause the source until `onDrain`. */
  write(bytes: Uint8Array): boolean {
    if (this.stopped) return true;
    let at = 0;
    while (at < bytes.length) {
      this.stage ??= takeStage();
      const stage = this.stage;
      const length = Math.min(bytes.length - at, stage.length - this.staged);
      stage.set(bytes.subarray(at, at + length), this.staged);
      this.staged += length;
      at += length;
      if (this.staged === stage.length) this.handOff();
    }
    if (this.writes === 0) this.handOff();
    if (this.pending < LOG_PENDING_BYTES) return true;
    this.blocked = true;
    return false;
  }

  /** Resolves when every byte written so far is on disk (or writing stopped). */
  flushed(): Promise<void> {
    if (this.pending === 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  /** Writes what is staged, then ends the file. */
  end(): void {
    this.handOff();
    this.stream.end();
  }

  /** Nothing more is written, nobody waits for it (buffers the stream may hold are not reused). */
  streamFailed(): void {
    this.stopped = true;
    this.stage = undefined;
    this.staged = 0;
    this.inFlight = 0;
    this.release();
    if (this.blocked) {
      this.blocked = false;
      this.onDrain();
    }
  }

  private handOff(): void {
    const stage = this.stage;
    if (!stage || this.staged === 0 || this.stopped) return;
    const length = this.staged;
    this.stage = undefined;
    this.staged = 0;
    this.writes++;
    this.inFlight += length;
    this.stream.write(stage.subarray(0, length), () => this.written(stage, length));
  }

  private written(stage: Buffer, length: number): void {
    if (this.stopped) return;
    this.writes--;
    this.inFlight -= length;
    giveBack(stage);
    if (this.writes === 0) this.handOff();
    if (this.blocked && this.pending <= LOG_PENDING_BYTES / 2) {
      this.blocked = false;
      this.onDrain();
    }
    if (this.pending === 0) this.release();
  }

  private release(): void {
    for (const resolve of this.flushWaiters.splice(0)) resolve();
  }
}
