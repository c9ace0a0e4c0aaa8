import { HEAD_TAIL_BYTES } from "../shared/constants.ts";

/** What a drain returns: the first bytes, the last bytes, and how many in between were dropped. */
export interface RetainedOutput {
  head: Buffer;
  tail: Buffer;
  omittedBytes: number;
}

/** The line spliced where retention dropped bytes, so a reader never mistakes the gap for continuity. */
export function omissionMarker(omittedBytes: number, retentionBytes: number = HEAD_TAIL_BYTES): string {
  return `\n[... ${omittedBytes} bytes omitted here: more than ${retentionBytes} bytes of output arrived between two reads ...]\n`;
}

/** Head, marker (only when bytes were dropped) and tail as one buffer. */
export function joinRetained(output: RetainedOutput): Buffer {
  if (output.omittedBytes === 0) return Buffer.concat([output.head, output.tail]);
  return Buffer.concat([output.head, Buffer.from(omissionMarker(output.omittedBytes)), output.tail]);
}

const EMPTY = Buffer.alloc(0);
const INITIAL_HEAD_CAPACITY = 4096;

/**
 * Bounded retention of a job's output between two reads, with Codex's policy: the first half of the
 * budget keeps the earliest bytes and is never trimmed; the second half keeps the latest bytes; the
 * middle is dropped and counted.
 *
 * Bytes are copied into owned storage rather than kept as the stream's chunks: a flood of one-byte
 * writes would otherwise cost an object per byte and a tail trim would shift a huge array. The head
 * grows by doubling up to its budget and the tail is a ring allocated only once the head is full, so a
 * quiet job costs a few KiB and a flooding one exactly the budget.
 */
export class HeadTailBuffer {
  readonly headBudget: number;
  readonly tailBudget: number;
  private head: Buffer = EMPTY;
  private headLength = 0;
  private ring: Buffer = EMPTY;
  private ringStart = 0;
  private ringLength = 0;
  private omitted = 0;

  /** `headBytes`: how much of the budget keeps the earliest bytes (half by default; 0 keeps only the latest). */
  constructor(
    readonly maxBytes: number = HEAD_TAIL_BYTES,
    headBytes: number = Math.floor(maxBytes / 2),
  ) {
    if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
    this.headBudget = Math.min(maxBytes, Math.max(0, headBytes));
    this.tailBudget = maxBytes - this.headBudget;
  }

  /** Bytes currently held (head + tail). */
  get retainedBytes(): number {
    return this.headLength + this.ringLength;
  }

  /** Bytes dropped since the last drain. */
  get omittedBytes(): number {
    return this.omitted;
  }

  push(chunk: Uint8Array): void {
    let rest = chunk;
    // The head holds the earliest bytes: once the tail has begun (after a split), everything goes there.
    const headRoom = this.ringLength === 0 && this.omitted === 0 ? this.headBudget - this.headLength : 0;
    if (headRoom > 0 && rest.length > 0) {
      const taken = Math.min(headRoom, rest.length);
      this.appendHead(rest.subarray(0, taken));
      rest = rest.subarray(taken);
    }
    if (rest.length > 0) this.pushTail(rest);
  }

  /** Everything retained since the last drain, without resetting (copies). */
  snapshot(): RetainedOutput {
    return {
      head: Buffer.from(this.head.subarray(0, this.headLength)),
      tail: Buffer.from(this.ringContents()),
      omittedBytes: this.omitted,
    };
  }

  /** Everything retained since the last drain, and resets the buffer (storage is released). */
  drain(): RetainedOutput {
    const output: RetainedOutput = {
      head: this.headLength === 0 ? EMPTY : this.head.subarray(0, this.headLength),
      tail: this.ringContents(),
      omittedBytes: this.omitted,
    };
    this.head = EMPTY;
    this.headLength = 0;
    this.ring = EMPTY;
    this.ringStart = 0;
    this.ringLength = 0;
    this.omitted = 0;
    return output;
  }

  /**
   * Keeps the first `offset` retained bytes (the head's, then the tail's) and removes what follows,
   * returned in order. Where the dropped middle lies in what is removed, its marker goes with it.
   */
  cutAfter(offset: number): Buffer[] {
    const all = this.drain();
    if (offset <= all.head.length) {
      this.push(all.head.subarray(0, offset));
      const gap = all.omittedBytes > 0 ? [Buffer.from(omissionMarker(all.omittedBytes, this.maxBytes))] : [];
      return [Buffer.from(all.head.subarray(offset)), ...gap, Buffer.from(all.tail)];
    }
    const inTail = offset - all.head.length;
    this.push(all.head);
    if (all.omittedBytes > 0) this.omitted = all.omittedBytes;
    this.pushTail(all.tail.subarray(0, inTail));
    return [Buffer.from(all.tail.subarray(inTail))];
  }

  private appendHead(bytes: Uint8Array): void {
    const needed = this.headLength + bytes.length;
    if (needed > this.head.length) {
      let capacity = Math.max(this.head.length * 2, INITIAL_HEAD_CAPACITY);
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.allocUnsafe(Math.min(capacity, this.headBudget));
      this.head.copy(grown, 0, 0, this.headLength);
      this.head = grown;
    }
    this.head.set(bytes, this.headLength);
    this.headLength = needed;
  }

  private pushTail(part: Uint8Array): void {
    const capacity = this.tailBudget;
    if (capacity === 0) {
      this.omitted += part.length;
      return;
    }
    if (this.ring.length === 0) this.ring = Buffer.allocUnsafe(capacity);
    if (part.length >= capacity) {
      // The part alone fills the tail: everything older is dropped.
      this.omitted += this.ringLength + part.length - capacity;
      this.ring.set(part.subarray(part.length - capacity), 0);
      this.ringStart = 0;
      this.ringLength = capacity;
      return;
    }
    const overflow = this.ringLength + part.length - capacity;
    if (overflow > 0) {
      this.omitted += overflow;
      this.ringStart = (this.ringStart + overflow) % capacity;
      this.ringLength -= overflow;
    }
    const writeAt = (this.ringStart + this.ringLength) % capacity;
    const firstSpan = Math.min(part.length, capacity - writeAt);
    this.ring.set(part.subarray(0, firstSpan), writeAt);
    if (firstSpan < part.length) this.ring.set(part.subarray(firstSpan), 0);
    this.ringLength += part.length;
  }

  private ringContents(): Buffer {
    if (this.ringLength === 0) return EMPTY;
    const end = this.ringStart + this.ringLength;
    if (end <= this.ring.length) return this.ring.subarray(this.ringStart, end);
    return Buffer.concat([this.ring.subarray(this.ringStart), this.ring.subarray(0, end - this.ring.length)]);
  }
}
