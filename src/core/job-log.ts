import { randomBytes } from "node:crypto";
import { createWriteStream, mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { type LogConfig, logConfig } from "./config.ts";
import { LOG_PENDING_BYTES, LOG_TAIL_BYTES } from "./constants.ts";
import { HeadTailBuffer } from "./head-tail-buffer.ts";

/**
 * Opens a log file for writing. The seam where tests put a slow or failing disk; the real one creates
 * the file exclusively (`wx`: never follows or reuses an existing path) with mode 0600, and buffers at
 * most {@link LOG_PENDING_BYTES} before asking the writer to wait.
 */
export type OpenLogFile = (path: string) => Writable;

export const openLogFile: OpenLogFile = (path) =>
  createWriteStream(path, { flags: "wx", mode: 0o600, highWaterMark: LOG_PENDING_BYTES });

/** What a log tells its job. */
export interface LogEvents {
  /** The write queue has room again: resume reading the child. */
  drain(): void;
  /** A quota was reached; the log is partial from here on. */
  quotaReached(reason: string): void;
}

/** Log bytes the jobs of one runtime may still write together. Limits do not reset while it lives. */
export class LogBudget {
  constructor(public remaining: number) {}
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
    this.budget = new LogBudget(config.runtimeQuotaBytes);
  }

  /** The directory, created with mode 0700 on first use (mkdtemp makes it private and unguessable). */
  path(): string {
    this.dir ??= mkdtempSync(join(this.config.parent, "pi-unified-exec-"));
    return this.dir;
  }

  /**
   * Opens a new log for job `jobId`; the name carries random bytes so it can never collide or be
   * guessed. When the directory cannot be created the job still runs, with a log that records why.
   */
  open(jobId: number, events: LogEvents): JobLog {
    let dir: string;
    try {
      dir = this.path();
    } catch (error) {
      return new JobLog(NO_LOG_PATH, undefined, events, this.config.jobQuotaBytes, this.budget, `log directory could not be created: ${(error as Error).message}`);
    }
    const path = join(dir, `job-${jobId}-${randomBytes(4).toString("hex")}.log`);
    return new JobLog(path, this.openFile(path), events, this.config.jobQuotaBytes, this.budget);
  }
}

/**
 * One job's log file. Writes are queued; once {@link LOG_PENDING_BYTES} are pending, `write` returns
 * false and the job must stop reading its child until `drain`, so a slow disk costs neither memory
 * nor log bytes. At a quota (per job or per runtime) a marker line is written and later bytes are only
 * counted, with the last {@link LOG_TAIL_BYTES} kept in memory and appended at exit, so the log holds
 * both ends. A storage error never touches the job: the log is marked partial with the reason.
 */
export class JobLog {
  private pendingWrites = 0;
  private readonly flushWaiters: (() => void)[] = [];
  private closed = false;
  private logged = 0;
  /** Bytes the quota kept out of the file, and the last of them. */
  private unlogged = 0;
  private tail: HeadTailBuffer | undefined;
  private quotaReason: string | undefined;

  constructor(
    readonly path: string,
    private readonly stream: Writable | undefined,
    private readonly events: LogEvents,
    private readonly jobQuota: number,
    private readonly budget: LogBudget,
    private failure?: string,
  ) {
    if (!stream) return;
    stream.on("drain", () => events.drain());
    stream.on("error", (error) => {
      this.failure ??= `log write failed: ${error.message}`;
      // Nothing more will be written; whoever waits for the disk must not wait forever.
      this.pendingWrites = 0;
      this.releaseFlushWaiters();
      events.drain();
    });
  }

  /** Why the log is incomplete, if it is (a storage error, or a quota). */
  get partialReason(): string | undefined {
    return this.failure ?? this.quotaReason;
  }

  /** Queues `chunk`. False means the queue is full: pause the source until `drain`. */
  write(chunk: Buffer): boolean {
    if (!this.stream || this.failure || this.closed) return true;
    if (this.quotaReason) {
      this.keepForTail(chunk);
      return true;
    }
    const jobRoom = this.jobQuota - this.logged;
    const allowed = Math.max(0, Math.min(jobRoom, this.budget.remaining));
    if (chunk.length <= allowed) return this.enqueue(chunk);
    const reason = allowed === jobRoom ? `log quota reached: ${this.jobQuota} bytes per job` : "log quota reached: the Pi session's logs are full";
    let ready = this.enqueue(chunk.subarray(0, allowed));
    this.quotaReason = reason;
    ready = this.enqueue(Buffer.from(`\n[pi-unified-exec: ${reason}. Later output is not logged; its last ${LOG_TAIL_BYTES} bytes are appended when the job exits.]\n`), false) && ready;
    this.keepForTail(chunk.subarray(allowed));
    this.events.quotaReached(reason);
    return ready;
  }

  /**
   * Appends what the quota kept out, as far as memory held it: a marker, then the last bytes. Called
   * when the job exits, and again at close for anything a lingering descendant printed since.
   */
  appendTail(): void {
    if (!this.tail || this.unlogged === 0 || !this.stream || this.failure || this.closed) return;
    const { head, tail } = this.tail.drain();
    const kept = Buffer.concat([head, tail]);
    this.enqueue(Buffer.from(`\n[pi-unified-exec: ${this.unlogged} bytes were not logged; the last ${kept.length} of them follow.]\n`), false);
    this.enqueue(kept, false);
    this.unlogged = 0;
  }

  /** Resolves when every byte written so far is on disk (or the log failed). */
  flushed(): Promise<void> {
    if (this.pendingWrites === 0 || this.failure) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  /** Closes the file after the queued writes. */
  close(): void {
    if (this.closed) return;
    this.appendTail();
    this.closed = true;
    this.stream?.end();
  }

  /** Writes `bytes`; those counted against the quotas are the job's own output, not our markers. */
  private enqueue(bytes: Buffer, counted = true): boolean {
    if (counted) {
      this.logged += bytes.length;
      this.budget.remaining -= bytes.length;
    }
    if (bytes.length === 0) return true;
    this.pendingWrites++;
    return this.stream!.write(bytes, () => {
      this.pendingWrites = Math.max(0, this.pendingWrites - 1);
      if (this.pendingWrites === 0) this.releaseFlushWaiters();
    });
  }

  private keepForTail(bytes: Buffer): void {
    this.unlogged += bytes.length;
    this.tail ??= new HeadTailBuffer(LOG_TAIL_BYTES, 0);
    this.tail.push(bytes);
  }

  private releaseFlushWaiters(): void {
    for (const resolve of this.flushWaiters.splice(0)) resolve();
  }
}
