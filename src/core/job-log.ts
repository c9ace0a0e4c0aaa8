import { randomBytes } from "node:crypto";
import { createWriteStream, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { LOG_PENDING_BYTES } from "./constants.ts";

/**
 * Opens a log file for writing. The seam where tests put a slow or failing disk; the real one creates
 * the file exclusively (`wx`: never follows or reuses an existing path) with mode 0600, and buffers at
 * most {@link LOG_PENDING_BYTES} before asking the writer to wait.
 */
export type OpenLogFile = (path: string) => Writable;

export const openLogFile: OpenLogFile = (path) =>
  createWriteStream(path, { flags: "wx", mode: 0o600, highWaterMark: LOG_PENDING_BYTES });

/**
 * The on-disk logs: every byte a job prints, mirrored to its own file so nothing is lost to the
 * model cap or to retention. Files live in one private directory per runtime, created on the first
 * job (activation alone writes nothing), and stay after the job for the model or the human to read.
 */
export class LogDirectory {
  private dir: string | undefined;

  constructor(
    private readonly parent: string = tmpdir(),
    private readonly openFile: OpenLogFile = openLogFile,
  ) {}

  /** The directory, created with mode 0700 on first use (mkdtemp makes it private and unguessable). */
  path(): string {
    this.dir ??= mkdtempSync(join(this.parent, "pi-unified-exec-"));
    return this.dir;
  }

  /**
   * Opens a new log for job `jobId`; the name carries random bytes so it can never collide or be
   * guessed. When the directory cannot be created the job still runs, with a log that records why.
   */
  open(jobId: number, onDrain: () => void): JobLog {
    let dir: string;
    try {
      dir = this.path();
    } catch (error) {
      return new JobLog(NO_LOG_PATH, undefined, onDrain, `log directory could not be created: ${(error as Error).message}`);
    }
    const path = join(dir, `job-${jobId}-${randomBytes(4).toString("hex")}.log`);
    return new JobLog(path, this.openFile(path), onDrain);
  }
}

/** What a job reports as its log path when no log file could be created. */
export const NO_LOG_PATH = "none";

/**
 * One job's log file. Writes are queued; once {@link LOG_PENDING_BYTES} are pending, `write` returns
 * false and the job must stop reading its child until `onDrain` fires, so a slow disk costs neither
 * memory nor log bytes. A storage error never touches the job: the log is marked partial with the
 * reason and later bytes are dropped.
 */
export class JobLog {
  private pendingWrites = 0;
  private readonly flushWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly path: string,
    private readonly stream: Writable | undefined,
    onDrain: () => void,
    private failure?: string,
  ) {
    if (!stream) return;
    stream.on("drain", onDrain);
    stream.on("error", (error) => {
      this.failure ??= `log write failed: ${error.message}`;
      // Nothing more will be written; whoever waits for the disk must not wait forever.
      this.pendingWrites = 0;
      this.releaseFlushWaiters();
      onDrain();
    });
  }

  /** Why the log is incomplete, if it is. */
  get partialReason(): string | undefined {
    return this.failure;
  }

  /** Queues `chunk`. False means the queue is full: pause the source until `onDrain`. */
  write(chunk: Buffer): boolean {
    if (!this.stream || this.failure || this.closed) return true;
    this.pendingWrites++;
    return this.stream.write(chunk, () => {
      this.pendingWrites = Math.max(0, this.pendingWrites - 1);
      if (this.pendingWrites === 0) this.releaseFlushWaiters();
    });
  }

  /** Resolves when every byte written so far is on disk (or the log failed). */
  flushed(): Promise<void> {
    if (this.pendingWrites === 0 || this.failure) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  /** Closes the file after the queued writes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream?.end();
  }

  private releaseFlushWaiters(): void {
    for (const resolve of this.flushWaiters.splice(0)) resolve();
  }
}
