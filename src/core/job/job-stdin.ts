/*
 * A job's input side: the model's sends and the user's keys, through a bounded queue that never
 * blocks Pi. On pipes Ctrl-C is SIGINT to the group and Ctrl-D an EOF after the bytes queued before
 * it; on a PTY every byte goes to the terminal, whose line discipline gives them their meaning.
 */
import type { JobInput } from "../request/input.ts";
import type { Transport } from "../transport/types.ts";

/** Bytes a job's stdin may hold unread (then a write waits in its window and is refused in part), and the pieces handed to the OS. */
export const INPUT_QUEUE_BYTES = 1024 * 1024;
const INPUT_CHUNK_BYTES = 64 * 1024;

/** What a `send` did: the kind of input, what is still waiting or was refused, and why it failed if it did. */
export interface InputOutcome {
  input: "bytes" | "interrupt" | "eof";
  failure?: string;
  /** Bytes of the job's stdin the child has not read yet (this call's and earlier ones'). */
  pendingBytes?: number;
  /** Bytes of this input that did not fit in the job's bounded stdin within the call's window. */
  refusedBytes?: number;
  /** Bytes of this input the job's stdin took (a failed write's bytes the OS never had are not). */
  sentBytes: number;
}

/** A send waits until its bytes are handed to the OS or its deadline passes, then says what waits and what did not fit; it never throws. */
export class JobStdin {
  private readonly queue: InputQueue;
  private moves = 0;

  constructor(
    private readonly transport: Transport,
    private readonly job: {
      /** True once the job is over: nothing more is sent. */
      over: () => boolean;
      /** True while the user holds the job's keyboard: a model's send still offering bytes stops. */
      userHolds: () => boolean;
    },
  ) {
    this.queue = new InputQueue(transport);
  }

  /** Counts each send's start and end (never what was sent): a listing's read of the job is stale once this moved. */
  get movements(): number {
    return this.moves;
  }

  /** Sends `input` for the model, or for the user typing into the job (`by: "user"`). */
  async send(input: JobInput, deadlineMono: number, by: "model" | "user" = "model"): Promise<InputOutcome> {
    this.moves++;
    try {
      return await this.deliver(input, deadlineMono, by);
    } finally {
      this.moves++;
    }
  }

  private async deliver(input: JobInput, deadlineMono: number, by: "model" | "user"): Promise<InputOutcome> {
    const tty = this.transport.kind === "pty";
    const kind = tty ? "bytes" : input.kind;
    if (this.job.over()) return { input: kind, sentBytes: 0, failure: "stdin write failed: the job has already exited" };
    if (!tty && input.kind === "interrupt") {
      try {
        this.transport.signal("SIGINT");
        return { input: kind, sentBytes: 0 };
      } catch (error) {
        return { input: kind, sentBytes: 0, failure: `stdin write failed: ${(error as Error).message}` };
      }
    }
    const start = this.queue.accepted;
    if (!tty && input.kind === "eof") {
      this.queue.end();
      return this.outcome(kind, 0, start, Number.POSITIVE_INFINITY); // an end of input fails with the stream
    }
    const bytes = terminalBytes(input);
    // The user's keys are never kept waiting behind more of a model's write than the queue holds already.
    const yielded = () => by === "model" && this.job.userHolds();
    let offset = this.queue.offer(bytes);
    while (offset < bytes.length && !this.queue.failed && !yielded() && (await this.changed(deadlineMono)) && !yielded()) {
      offset += this.queue.offer(bytes.subarray(offset));
    }
    // The call's own bytes are delivered when the OS has everything up to the last of them; a write
    // already under way when the job ended is waited for, since the job may have read it.
    const end = this.queue.accepted;
    while (this.queue.flushed < end && (!this.queue.failed || this.queue.writeInFlight) && (await this.changed(deadlineMono)));
    return this.outcome(kind, bytes.length - offset, start, end, offset < bytes.length && yielded());
  }

  /** Sends what the user typed; resolves to how many of its bytes the job's stdin took. */
  async sendTyped(bytes: Buffer, deadlineMono: number): Promise<number> {
    return (await this.send({ kind: "bytes", bytes }, deadlineMono, "user")).sentBytes;
  }

  /** The job is gone: input nobody will read is dropped, and a send waiting on it returns. */
  close(): void {
    this.queue.dispose("stdin write failed: the job has exited");
  }

  /** Waits for the queue to change; false once the deadline passed, or the job is over and no write is under way. */
  private async changed(deadlineMono: number): Promise<boolean> {
    if ((this.job.over() && !this.queue.writeInFlight) || performance.now() >= deadlineMono) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadlineMono - performance.now()));
    });
    try {
      return await Promise.race([this.queue.changed().then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** `start`, `end`: the positions of this call's first byte and just after its last; a failure after the OS had them all is not this call's. */
  private outcome(kind: InputOutcome["input"], refusedBytes: number, start: number, end: number, yielded = false): InputOutcome {
    const pendingBytes = this.queue.pendingBytes;
    const failed = this.queue.failed !== undefined && this.queue.flushed < end;
    // What a failed stream never wrote is lost with it, so only the bytes the OS had were sent.
    const sentBytes = Math.max(0, (failed ? this.queue.flushed : Math.min(end, this.queue.accepted)) - start);
    const failure = failed
      ? this.queue.failed
      : yielded
        ? `the user took over the job's keyboard while this input was being sent: its last ${refusedBytes} bytes were not sent`
        : refusedBytes > 0
          ? `stdin is full: the job has not read ${pendingBytes} bytes yet, so ${refusedBytes} bytes of this input were refused; ` +
            "send them again once it reads (for bulk data, give the command a file instead)"
          : undefined;
    return {
      input: kind,
      sentBytes,
      ...(failure ? { failure } : {}),
      ...(pendingBytes > 0 ? { pendingBytes } : {}),
      ...(refusedBytes > 0 ? { refusedBytes } : {}),
    };
  }
}

/** The bytes a terminal receives for an input: Ctrl-C and Ctrl-D are just 0x03 and 0x04 there. */
function terminalBytes(input: JobInput): Buffer {
  if (input.kind === "bytes") return input.bytes;
  return Buffer.of(input.kind === "interrupt" ? 0x03 : 0x04);
}

/** Where queued input goes: the transport's write (resolves once the OS has the bytes) and end of input. */
export interface InputSink {
  write(bytes: Buffer): Promise<void>;
  closeInput(): void;
}

/**
 * A job's stdin on its way to the child, ordered: one piece at a time goes to the OS, at most
 * {@link INPUT_QUEUE_BYTES} are held (a child that stops reading costs bounded memory), what does not
 * fit is refused. An end of input follows every byte queued before it.
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
