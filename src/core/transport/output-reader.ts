/*
 * A pipe job's output, read. Each pipe reads into a buffer of its own, reused (a 200 MB flood: +28 MiB
 * of RSS, +49 MiB with Node's fresh buffers); a streaming pipe's reads are joined into one delivery
 * (39 000 chunks down to 4 500); a turn of the event loop reads at most 512 KiB per pipe and 10 ms for
 * all pipes; small reads of a stream rest the thread 0.1 ms (floods 15–25 % faster).
 */
import { Socket } from "node:net";
import type { Readable } from "node:stream";

/** Each pipe's buffer: also the most one delivery carries. */
export const READ_BUFFER_BYTES = 64 * 1024;
/** One pipe's bytes per turn (libuv would read 2 MiB), and all pipes' delivery time per turn. */
export const READ_TURN_BYTES = 512 * 1024;
export const READ_TURN_MS = 10;
/** A streaming pipe's held bytes go out this long after the first read (the timer's resolution), or with under READ_MIN_ROOM_BYTES left. */
export const OUTPUT_BATCH_MS = 1;
export const READ_MIN_ROOM_BYTES = 16 * 1024;
/**
 * A read under READ_REST_SMALL_BYTES within READ_REST_STREAMING_MS of the previous one rests the
 * thread READ_REST_MS (a whole millisecond made floods slower), once per turn, and only while the loop
 * idled at least READ_REST_IDLE_SHARE of its last READ_REST_WINDOW_MS (else: floods 40 % longer).
 */
export const READ_REST_MS = 0.1;
export const READ_REST_SMALL_BYTES = 16 * 1024;
export const READ_REST_STREAMING_MS = 2;
export const READ_REST_IDLE_SHARE = 0.15;
export const READ_REST_WINDOW_MS = 100;

/**
 * Joins a job's pipe reads into fewer, larger deliveries. Invariant: every byte read from the job's
 * pipes is delivered exactly once, in read order across both pipes, at most {@link OUTPUT_BATCH_MS}
 * after its read; a read after a quiet spell goes out at once (a prompt waits for nothing).
 */
export class ReadBatch {
  /** The slot holding bytes not yet delivered; one at a time, so order across pipes holds. */
  private pending: BatchSlot | undefined;
  private lastDelivery = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private armed = false;

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

/** One pipe's buffer: bytes held are `[start, end)`; the socket's next read goes at `end`. */
export class BatchSlot {
  private readonly buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  private start = 0;
  private end = 0;

  constructor(private readonly batch: ReadBatch) {}

  /** Room left for the next read. */
  get room(): number {
    return this.buffer.length - this.end;
  }

  /** Where the next read goes (called after every read): after what is held, or the whole buffer. */
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

/** What a rest needs: a clock, the loop's idle time (ms spent waiting in its poll) and a sleep; tests step them. */
export interface RestClock {
  now(): number;
  loopIdleMs(): number;
  sleep(ms: number): void;
}

/** A timed wait on a cell nobody signals: the thread sleeps, with no turn of the loop and no CPU. */
const restCell = new Int32Array(new SharedArrayBuffer(4));

const threadRestClock: RestClock = {
  now: () => performance.now(),
  loopIdleMs: () => performance.eventLoopUtilization().idle,
  sleep: (ms) => void Atomics.wait(restCell, 0, 0, ms),
};

/** Rests the thread between a stream's small reads while the loop has had time to spare of late. */
export class ReadRest {
  private windowStart: number;
  private idleAtStart: number;
  private restedMs = 0;
  /** What the last window said; a first window is given the benefit of the doubt. */
  private spare = true;

  constructor(private readonly clock: RestClock = threadRestClock) {
    this.windowStart = clock.now();
    this.idleAtStart = clock.loopIdleMs();
  }

  /** True when it rested. */
  rest(): boolean {
    this.review();
    if (!this.spare) return false;
    const before = this.clock.now();
    this.clock.sleep(READ_REST_MS);
    this.restedMs += this.clock.now() - before;
    return true;
  }

  /** At a window's end: whether the loop waited in its poll for its share of the time it did not rest. */
  private review(): void {
    const now = this.clock.now();
    const elapsed = now - this.windowStart;
    if (elapsed < READ_REST_WINDOW_MS) return;
    const idle = this.clock.loopIdleMs();
    const own = elapsed - this.restedMs;
    this.spare = own <= 0 || (idle - this.idleAtStart) / own >= READ_REST_IDLE_SHARE;
    this.windowStart = now;
    this.idleAtStart = idle;
    this.restedMs = 0;
  }
}

/**
 * The delivery time all of the process's pipes share in one turn of the loop ({@link READ_TURN_MS}):
 * once spent, a pipe that reads again yields to the next turn (a pattern's matching can make a
 * delivery costly). It also picks the one read per turn that may rest. The clock and the next turn
 * are given (tests step them).
 */
export class ReadTurn {
  private spentMs = 0;
  private open = false;
  private rested = false;
  private readonly reset = () => {
    this.open = false;
    this.rested = false;
    this.spentMs = 0;
  };

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly nextTurn: (callback: () => void) => void = (callback) => setImmediate(callback),
    private readonly resting: ReadRest = new ReadRest(),
  ) {}

  /** A delivery starts: the time to pass to {@link spent}. The first of a turn opens it. */
  start(): number {
    if (!this.open) {
      this.open = true;
      this.nextTurn(this.reset);
    }
    return this.now();
  }

  /** The delivery begun at `startedAt` is done: true when the turn's share is spent (the reader should yield). */
  spent(startedAt: number): boolean {
    this.spentMs += this.now() - startedAt;
    return this.spentMs >= READ_TURN_MS;
  }

  /** After a read of `bytes`, `sincePreviousMs` after its pipe's previous one: may rest the thread. True when it rested. */
  rest(bytes: number, sincePreviousMs: number): boolean {
    if (this.rested || bytes >= READ_REST_SMALL_BYTES || sincePreviousMs > READ_REST_STREAMING_MS) return false;
    this.rested = this.resting.rest();
    return this.rested;
  }
}

/** The turn every output reader of this process shares. */
const processReadTurn = new ReadTurn();

export interface OutputReader {
  pause(): void;
  resume(): void;
  /** Closes our end now; `onClosed` follows. */
  destroy(): void;
  /** Lets the pipe keep the process alive (a reader of an idle warm shell starts unref'd). */
  ref(): void;
  /** Reads go into a reused buffer (false: Node's own buffers through 'data'). */
  readonly reusesBuffer: boolean;
}

interface NodeSocketInternals {
  _handle?: { useUserBuffer?: unknown; readStop?: unknown; readStart?: unknown; reading?: boolean } | null;
}

/**
 * A pipe's handle taken from the socket Node made for it, not reading: bytes and the end of file wait
 * in the kernel. A warm shell's pipes stay so until adoption (Node would read them, and at the child's
 * exit throw away what nobody read).
 */
export interface DetachedPipe {
  readonly handle: object;
}

/**
 * Takes the pipe's handle from a socket Node created, to wrap it in a socket of our own with `onread`
 * (Node reads into a caller's buffer only for sockets built so). Two internals are used, `_handle` and
 * `useUserBuffer`; without them (another Node, Windows) undefined: the pipe is read through 'data'.
 */
function takeHandle(stream: Readable): object | undefined {
  if (process.platform === "win32" || !(stream instanceof Socket) || stream.destroyed || stream.readableLength > 0) return undefined;
  const internals = stream as unknown as NodeSocketInternals;
  const handle = internals._handle;
  if (!handle || typeof handle.useUserBuffer !== "function" || typeof handle.readStop !== "function") return undefined;
  if (typeof handle.readStart !== "function") return undefined;
  internals._handle = null;
  return handle;
}

/** Detaches a just-created child's output pipe (in its spawn's turn) and stops its reading; undefined when Node's internals differ. */
export function detachPipe(stream: Readable): DetachedPipe | undefined {
  const handle = takeHandle(stream) as (NodeSocketInternals["_handle"] & object) | undefined;
  if (!handle) return undefined;
  (handle.readStop as () => number).call(handle);
  handle.reading = false;
  // Held, it keeps nothing alive; the reader that wraps it refs it again (`OutputReader.ref`).
  (handle as { unref?: () => void }).unref?.();
  return { handle };
}

/** Closes a detached pipe nobody will read. */
export function closeDetached(pipe: DetachedPipe): void {
  (pipe.handle as { close?: () => void }).close?.();
}

/** A socket over `handle` reading into the batch's buffer, or undefined: `stream` gets its handle back (no stream: the failure is thrown). */
function socketOnOwnBuffer(
  handle: object,
  stream: Readable | undefined,
  batch: ReadBatch,
  turn: ReadTurn,
  counted: (bytes: number, overTime: boolean, readAt: number) => void,
): Socket | undefined {
  try {
    const slot = batch.slot();
    const callback = (bytes: number): boolean => {
      const started = turn.start();
      slot.read(bytes);
      counted(bytes, turn.spent(started), started);
      return true; // pausing goes through `pause()`
    };
    // `handle` is not in Node's public typings of the options; it is how child_process builds these sockets.
    return new Socket({
      handle,
      readable: true,
      writable: false,
      onread: { buffer: () => slot.next(), callback },
    } as unknown as ConstructorParameters<typeof Socket>[0]);
  } catch (error) {
    if (!stream) throw error;
    (stream as unknown as NodeSocketInternals)._handle = handle as NodeSocketInternals["_handle"];
    return undefined;
  }
}

/**
 * Reads one output pipe through `batch`: a chunk handed on is a view of the pipe's buffer, valid only
 * during the call (whoever keeps bytes copies them). A pause the job asks for (log backpressure) is
 * kept apart from the turn's and wins. `turn`: the process's, unless a test gives its own.
 */
export function readOutput(
  source: Readable | DetachedPipe,
  batch: ReadBatch,
  onClosed: () => void,
  turn: ReadTurn = processReadTurn,
): OutputReader {
  const stream = "handle" in source ? undefined : source;
  const handle = stream ? takeHandle(stream) : (source as DetachedPipe).handle;
  let held = false;
  let yielded = false;
  /** Bytes read since the last yield: counted across turns, so a quiet turn schedules nothing. */
  let sinceYield = 0;
  let previousRead = Number.NEGATIVE_INFINITY;
  const endYield = () => {
    yielded = false;
    if (!held && !readable.destroyed) readable.resume();
  };
  const counted = (bytes: number, overTime: boolean, readAt: number) => {
    const sincePrevious = readAt - previousRead;
    previousRead = readAt;
    sinceYield += bytes;
    if (yielded) return;
    if (sinceYield < READ_TURN_BYTES && !overTime) return void turn.rest(bytes, sincePrevious);
    sinceYield = 0;
    yielded = true;
    readable.pause();
    setImmediate(endYield);
  };
  const socket = handle ? socketOnOwnBuffer(handle, stream, batch, turn, counted) : undefined;
  const readable: Readable = socket ?? stream!;
  if (!socket)
    readable.on("data", (chunk: Buffer) => {
      const started = turn.start();
      batch.deliverNow(chunk);
      counted(chunk.length, turn.spent(started), started);
    });
  // A reset pipe (ECONNRESET) ends the output like an end of file; unhandled it would crash Pi.
  readable.on("error", () => {});
  readable.on("close", () => {
    batch.flush(); // bytes read before the end are delivered before it
    onClosed();
  });
  return {
    pause: () => {
      held = true;
      readable.pause();
    },
    resume: () => {
      held = false;
      if (!yielded) readable.resume();
    },
    destroy: () => readable.destroy(),
    ref: () => (readable as Socket).ref?.(),
    reusesBuffer: socket !== undefined,
  };
}
