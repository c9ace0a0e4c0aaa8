import type { JobInput } from "../request/input.ts";
import type { Transport } from "../transport/types.ts";
import { InputQueue } from "./input-queue.ts";

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

/**
 * A job's input side. On pipes: bytes to stdin, Ctrl-C as SIGINT to the process group, Ctrl-D as EOF
 * after the bytes queued before it. On a PTY every byte goes to the terminal, whose line discipline
 * gives Ctrl-C and Ctrl-D their meaning (or passes them on, to a program in raw mode). Bytes go
 * through the bounded {@link InputQueue}: a send waits until its bytes are handed to the OS or its
 * deadline passes, then says what still waits and what did not fit. Nothing here ever throws.
 */
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

  /**
   * Counts each send's start and its end (never what was sent): what a listing read of the job
   * (whether it waits for input) may be stale once this moved.
   */
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
