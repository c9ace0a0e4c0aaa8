/*
 * log/ — each job's log on disk: the private directory, exclusive 0600 files, the bounded write
 * queue with backpressure (log-stage), and the per-job and per-runtime quotas (this file, with
 * log-settings for the environment's say).
 *
 * May import: shared, output.
 */
import { createWriteStream, mkdtempSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { HeadTailBuffer } from "../output/head-tail-buffer.ts";
import { LOG_PENDING_BYTES, LOG_TAIL_BUDGET_BYTES, LOG_TAIL_BYTES } from "../shared/constants.ts";
import { type LogConfig, logConfig } from "./log-settings.ts";
import { StagedWriter } from "./log-stage.ts";

/**
 * Opens a log file for writing. The seam where tests put a slow or failing disk; the real one creates
 * the file exclusively (`wx`: never follows or reuses an existing path) with mode 0600, and buffers at
 * most {@link LOG_PENDING_BYTES} before asking the writer to wait. The create is synchronous: a new
 * name in the runtime's private directory costs tens of microseconds, less than handing the open to
 * libuv's thread pool and hearing back (a thread woken on a machine whose cores the job's own start
 * is using). If it fails, the stream opens the way it used to, so the same failure arrives as its error.
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

/**
 * Log bytes the jobs of one runtime may still write together (`remaining`), and the bytes the tails
 * appended at exit may still add on top (`tailRemaining`). Limits do not reset while it lives, so
 * the runtime's directory never holds more than both together plus our marker lines.
 */
export class LogBudget {
  constructor(
    public remaining: number,
    public tailRemaining: number = LOG_TAIL_BUDGET_BYTES,
  ) {}
}

/** What a job reports as its log path when no log file could be created. */
export const NO_LOG_PATH = "none";

/**
 * The on-disk logs: every byte a job prints, mirrored to its own file so nothing is lost to the
 * model cap or to retention. Files live in one private directory per runtime, created on the first
 * job (activation alone writes nothing), and stay after the job for the model or the human to read.
 */
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
   * Opens a new log for job `jobId`, named `<id>.log`: the directory is private and its name random,
   * so the file name needs no random part of its own (the model reads this path, so every character
   * costs), and ids are never reused within a Pi process, so names never collide; the exclusive open
   * refuses an existing file anyway. When the directory cannot be created the job still runs, with
   * a log that records why.
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

/**
 * One job's log file. Writes are queued; once {@link LOG_PENDING_BYTES} are pending, `write` returns
 * false and the job must stop reading its child until `drain`, so a slow disk costs neither memory
 * nor log bytes. At a quota (per job or per runtime) a marker line is written and later bytes are only
 * counted, with the last {@link LOG_TAIL_BYTES} kept in memory and appended at exit, so the log holds
 * both ends — as far as the runtime's tail budget lasts: past it a log holds only its marker. A
 * storage error never touches the job: the log is marked partial with the reason.
 */
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
      writer.stop();
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
