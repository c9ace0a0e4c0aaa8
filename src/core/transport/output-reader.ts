import { Socket } from "node:net";
import type { Readable } from "node:stream";
import { READ_TURN_BYTES } from "../shared/constants.ts";
import type { ReadBatch } from "./read-batch.ts";
import { processReadTurn, type ReadTurn } from "./read-turn.ts";

/**
 * Reads one of a child's output pipes into a buffer of its own, reused for every read, instead of a
 * fresh 64 KiB buffer per read: a flood then leaves no dead buffers outside the JS heap waiting for
 * the garbage collector (measured in Pi: a 200 MB flood cost +49 MiB of RSS reading into fresh
 * buffers, +28 MiB into one reused buffer). The reads go through the job's {@link ReadBatch}, which
 * moves the socket's read target past the bytes it holds and delivers them together.
 *
 * Node reads into a caller's buffer only for sockets it was asked to (the `onread` option of
 * `net.Socket`, whose `buffer` may be a function called after every read for the next target); a
 * child's stdio sockets are created inside `child_process`. So the pipe's handle is taken from the
 * socket Node made (which keeps nothing: its handle is gone, every call on it is a no-op) and
 * wrapped in a socket of our own with `onread`. That uses two internals, the socket's `_handle` and
 * the handle's `useUserBuffer`; when either is missing (another Node, or Windows, whose pipes are
 * not tried here) the pipe is read through `'data'` events, each chunk delivered at once.
 *
 * A chunk handed on is a view of the pipe's buffer, valid only during the call: whoever keeps bytes
 * must copy them (retention, the log's staging buffers and the decoders all do).
 *
 * Either way a pipe reads at most {@link READ_TURN_BYTES} in one turn of the event loop, and none after
 * the process's readers together spent their time in the turn (`read-turn.ts`), then pauses until the
 * next turn (a pause the job asked for, for backpressure, is kept apart and wins). A pipe that streams
 * in small reads rests the thread a tenth of a millisecond after one, so the next read takes several
 * of the producer's writes at once (`READ_REST_MS`).
 */
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
 * in the kernel until a reader wraps it. A warm shell's output pipes are kept so until the shell is
 * handed its job (Node would otherwise read them, and at the child's exit throw away what nobody read).
 */
export interface DetachedPipe {
  readonly handle: object;
}

/** Takes the pipe's handle from a socket Node created, when the user-buffer path can be used; undefined otherwise. */
function takeHandle(stream: Readable): object | undefined {
  if (process.platform === "win32" || !(stream instanceof Socket) || stream.destroyed || stream.readableLength > 0) return undefined;
  const internals = stream as unknown as NodeSocketInternals;
  const handle = internals._handle;
  if (!handle || typeof handle.useUserBuffer !== "function" || typeof handle.readStop !== "function") return undefined;
  if (typeof handle.readStart !== "function") return undefined;
  internals._handle = null;
  return handle;
}

/**
 * Detaches a just-created child's output pipe (in the turn of its spawn, before anything was read)
 * and stops its reading; undefined when Node's internals differ (the caller must not rely on it).
 */
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

/**
 * A socket over `handle` that reads into the batch's own buffer (the socket's user-buffer path), or
 * undefined when Node will not build one: then `stream` gets its handle back and is read through
 * `'data'` events. Without a stream to fall back on, the failure is thrown.
 */
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

/** `turn`: the share of each turn of the loop this reader's deliveries count against (the process's; tests give their own). */
export function readOutput(
  source: Readable | DetachedPipe,
  batch: ReadBatch,
  onClosed: () => void,
  turn: ReadTurn = processReadTurn,
): OutputReader {
  const stream = "handle" in source ? undefined : source;
  const handle = stream ? takeHandle(stream) : (source as DetachedPipe).handle;
  /** Paused by the job (backpressure), and paused until the next turn (the turn's share was read). */
  let held = false;
  let yielded = false;
  /** Bytes read since the last yield: counted across turns, so a quiet turn schedules nothing. */
  let sinceYield = 0;
  /** When the previous read started, on the turn's clock. */
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
    // Bytes read before the end are delivered before it.
    batch.flush();
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
