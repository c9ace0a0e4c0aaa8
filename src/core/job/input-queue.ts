import { INPUT_CHUNK_BYTES, INPUT_QUEUE_BYTES } from "../shared/constants.ts";

/** Where queued input goes: the transport's write (resolves once the OS has the bytes) and end of input. */
export interface InputSink {
  write(bytes: Buffer): Promise<void>;
  closeInput(): void;
}

/**
 * A job's stdin on its way to the child: ordered, bounded, never blocking Pi. Bytes wait here until
 * the transport has handed the previous piece to the OS, one piece of at most {@link INPUT_CHUNK_BYTES}
 * at a time. At most {@link INPUT_QUEUE_BYTES} are held (waiting or being written), so a child that
 * stops reading costs bounded memory however much the model sends; what does not fit is refused and
 * counted. An end of input follows every byte queued before it.
 */
export class InputQueue {
  private readonly chunks: Buffer[] = [];
  /** Bytes accepted and not yet handed to the OS (including the piece being written). */
  private held = 0;
  private acceptedTotal = 0;
  private flushedTotal = 0;
  private writing = false;
  private endRequested = false;
  private failure: string | undefined;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly sink: InputSink,
    private readonly limit: number = INPUT_QUEUE_BYTES,
  ) {}

  /** Bytes waiting for the child to read them. */
  get pendingBytes(): number {
    return this.held;
  }

  /** Why input can no longer be delivered, once that is known. */
  get failed(): string | undefined {
    return this.failure;
  }

  /** Position (in bytes accepted since spawn) just after the last accepted byte. */
  get accepted(): number {
    return this.acceptedTotal;
  }

  /** Position up to which the OS has every byte. */
  get flushed(): number {
    return this.flushedTotal;
  }

  /** Takes as much of `bytes` as fits and returns how many bytes it took. */
  offer(bytes: Buffer): number {
    if (this.failure || this.endRequested) return 0;
    const taken = Math.min(bytes.length, this.limit - this.held);
    for (let at = 0; at < taken; at += INPUT_CHUNK_BYTES) {
      // Copied: the caller's buffer may be large, and only what was taken is kept.
      this.chunks.push(Buffer.from(bytes.subarray(at, Math.min(taken, at + INPUT_CHUNK_BYTES))));
    }
    this.held += taken;
    this.acceptedTotal += taken;
    this.pump();
    return taken;
  }

  /** Ends the child's input once every byte queued so far is written. */
  end(): void {
    if (this.failure || this.endRequested) return;
    this.endRequested = true;
    this.pump();
  }

  /** Resolves at the next change: bytes written (room freed), a failure, or the queue given up. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** A piece is being handed to the OS right now: its outcome is not known yet. */
  get writeInFlight(): boolean {
    return this.writing;
  }

  /**
   * Drops everything still queued (the job is gone); later offers take nothing. A piece already being
   * written still counts as flushed when its write succeeds: a job that exits because of what it just
   * read (Ctrl-C on a PTY) got those bytes.
   */
  dispose(reason: string): void {
    this.failure ??= reason;
    this.chunks.length = 0;
    this.held = 0;
    this.notify();
  }

  private pump(): void {
    if (this.writing || this.failure) return;
    const chunk = this.chunks.shift();
    if (!chunk) {
      if (this.endRequested) this.sink.closeInput();
      return;
    }
    this.writing = true;
    this.sink.write(chunk).then(
      () => {
        this.writing = false;
        this.held = Math.max(0, this.held - chunk.length);
        this.flushedTotal += chunk.length;
        this.notify();
        this.pump();
      },
      (error: Error) => {
        this.writing = false;
        this.dispose(`stdin write failed: ${error.message}`);
      },
    );
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
