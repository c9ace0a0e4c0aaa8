import { READ_TURN_MS } from "../shared/constants.ts";
import { READ_REST_SMALL_BYTES, READ_REST_STREAMING_MS, ReadRest } from "./read-rest.ts";

/**
 * The time the output pipes of the whole process may spend handing over what they read in one turn
 * of the event loop, {@link READ_TURN_MS}. Each read's delivery (counting, retaining, previewing,
 * staging for the log and testing an armed pattern's lines) is timed; once a turn's deliveries have
 * taken that long, every pipe that reads again in the same turn yields to the next turn after that
 * read (`output-reader.ts`). The byte bound per pipe (`READ_TURN_BYTES`) keeps a plain flood's turn
 * short; this bounds a turn whose bytes cost more each (a pattern's matching), across all jobs at
 * once, so Pi's timers and input run between the slices. Nothing is dropped or reordered: a yielded
 * pipe only waits in the kernel.
 *
 * It also decides which read may rest the thread (`read-rest.ts`): a small read of a pipe that
 * streams, at most one per turn, so sixteen floods rest the thread once a turn, not sixteen times,
 * and every pipe gathers bytes meanwhile.
 *
 * Pure of the loop: the clock, the way to run something at the next turn and the rest are given (tests step them).
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

  /** A read's delivery starts: the time to pass to {@link spent}. The first read of a turn opens it. */
  start(): number {
    if (!this.open) {
      this.open = true;
      this.nextTurn(this.reset);
    }
    return this.now();
  }

  /** The delivery begun at `startedAt` is done: true when this turn's share is used up (the reader should yield). */
  spent(startedAt: number): boolean {
    this.spentMs += this.now() - startedAt;
    return this.spentMs >= READ_TURN_MS;
  }

  /**
   * After a read of `bytes` that started `sincePreviousMs` after its pipe's previous read (both on this
   * turn's clock, from {@link start}): may rest the thread when the pipe streams in small reads and no
   * pipe rested in this turn yet. True when it rested.
   */
  rest(bytes: number, sincePreviousMs: number): boolean {
    if (this.rested || bytes >= READ_REST_SMALL_BYTES || sincePreviousMs > READ_REST_STREAMING_MS) return false;
    this.rested = this.resting.take();
    return this.rested;
  }
}

/** The turn every output reader of this process shares. */
export const processReadTurn = new ReadTurn();
