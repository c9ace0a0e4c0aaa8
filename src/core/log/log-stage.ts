import type { Writable } from "node:stream";
import { LOG_PENDING_BYTES, LOG_STAGE_BYTES, LOG_STAGE_SPARE } from "../shared/constants.ts";

/**
 * The write side of one job's log: bytes are copied into staging buffers that are reused for the
 * life of the process, so the log never holds a reference to a read buffer (pipes reuse theirs) and
 * a flood allocates nothing per chunk. A staging buffer goes to the file when it is full, or at once
 * when no write is in flight (so a quiet job's line reaches the disk without waiting); while one write
 * is in flight the next buffer fills, so a flood is written in large pieces. A buffer comes back to a
 * process-wide spare list when its write is done.
 *
 * `write` returns false once {@link LOG_PENDING_BYTES} are staged or in flight; `drain` follows when
 * half of that is written, so the job is not paused and resumed for every piece.
 */

/** Spare staging buffers of the process, shared by every log. */
const spare: Buffer[] = [];

function takeStage(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafe(LOG_STAGE_BYTES);
}

function giveBack(buffer: Buffer): void {
  if (spare.length < LOG_STAGE_SPARE) spare.push(buffer);
}

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

  /** The stream failed: nothing more is written, nobody waits for it (buffers it may hold are not reused). */
  stop(): void {
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
