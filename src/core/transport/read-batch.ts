import { OUTPUT_BATCH_MS, READ_BUFFER_BYTES, READ_MIN_ROOM_BYTES } from "../shared/constants.ts";

/**
 * Joins a job's pipe reads into fewer, larger deliveries.
 *
 * Invariant (owned here): every byte read from the job's pipes is delivered exactly once, in the
 * order it was read across both pipes, and at most {@link OUTPUT_BATCH_MS} after its read; sooner
 * when the other pipe reads, when its pipe closes, or when its buffer is nearly full.
 *
 * Why: a producer writing 4 KiB at a time (what stdio does into a pipe) wakes its reader for every
 * write. Counting, retaining, previewing and logging each such read cost more CPU than the read
 * itself, and on a busy machine that CPU is taken from the producer. So the reads of a streaming
 * pipe go one after another into the pipe's own buffer (the socket's read target is moved past what
 * is held), and the job sees them as one chunk. A read after a quiet spell is delivered at once: a
 * prompt or a single line costs no delay.
 */
export class ReadBatch {
  /** The slot holding bytes not yet delivered; at most one at a time, so order across pipes holds. */
  private pending: BatchSlot | undefined;
  private lastDelivery = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private armed = false;

  /** `now`: the monotonic clock in ms (tests pass their own). */
  constructor(
    private readonly onData: (chunk: Buffer) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A pipe's own buffer in this batch. */
  slot(): BatchSlot {
    return new BatchSlot(this);
  }

  /** `slot` has just read new bytes (already counted in it). */
  read(slot: BatchSlot): void {
    if (this.pending !== slot) this.flush();
    this.pending = slot;
    const now = this.now();
    if (now - this.lastDelivery >= OUTPUT_BATCH_MS || slot.room < READ_MIN_ROOM_BYTES) {
      this.flush(now);
      return;
    }
    this.arm();
  }

  /** A chunk read outside the slots (Node's own buffers): delivered now, after what is pending. */
  deliverNow(chunk: Buffer): void {
    this.flush();
    this.lastDelivery = this.now();
    this.onData(chunk);
  }

  /** Delivers what is pending, if anything. */
  flush(now: number = this.now()): void {
    const slot = this.pending;
    if (!slot) return;
    this.pending = undefined;
    const chunk = slot.take();
    if (chunk.length === 0) return;
    this.lastDelivery = now;
    this.onData(chunk);
  }

  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    if (this.timer) this.timer.refresh();
    else {
      this.timer = setTimeout(() => {
        this.armed = false;
        this.flush();
      }, OUTPUT_BATCH_MS);
      // Held bytes never keep Pi alive on their own: their pipe does, while it is open.
      this.timer.unref();
    }
  }
}

/**
 * One pipe's buffer: bytes held are `[start, end)`; the socket's next read goes at `end`, the place
 * last handed out by {@link next}, which is called after every read.
 */
export class BatchSlot {
  private readonly buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  private start = 0;
  private end = 0;

  constructor(private readonly batch: ReadBatch) {}

  /** Room left for the next read. */
  get room(): number {
    return this.buffer.length - this.end;
  }

  /** Where the next read goes: after what is held, or the whole buffer when nothing is. */
  next(): Buffer {
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
      return this.buffer;
    }
    return this.buffer.subarray(this.end);
  }

  /** The socket read `bytes` into the place last handed out. */
  read(bytes: number): void {
    this.end += bytes;
    this.batch.read(this);
  }

  /** The held bytes as a view (valid until the next read), and nothing held from now on. */
  take(): Buffer {
    const chunk = this.buffer.subarray(this.start, this.end);
    // The socket still reads at `end` until `next` is called again: keep the place.
    this.start = this.end;
    return chunk;
  }
}
