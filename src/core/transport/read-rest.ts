/**
 * A pipe that streams in small reads (each under READ_REST_SMALL_BYTES, READ_REST_STREAMING_MS or less
 * after the one before) may rest Pi's thread READ_REST_MS after a read, once per turn of the event loop
 * for all pipes together (`read-turn.ts` picks the read, this file decides whether). A producer
 * writing 4 KiB at a time (stdio into a pipe) otherwise wakes its reader for every write; a rest lets
 * the socket gather several writes for one read. A tenth of a millisecond: Node's timers cannot rest
 * less than a whole one, and in a millisecond a fast producer fills the socket (208 KiB) and waits,
 * which made a 200 MB flood slower instead of faster; two tenths already slowed a producer of 1 GB/s.
 * READ_REST_IDLE_SHARE over READ_REST_WINDOW_MS: a rest is taken only while the loop spent at least
 * that share of its last window waiting in its poll (its rests left out); below it the reader is the
 * slower side and a rest would only delay it (windows of a flood from one fast producer, `seq` or
 * `head`, measured 0–15 % idle with a rare one up to 30 %; of a `fold` pipeline mostly 20–60 %).
 */
export const READ_REST_MS = 0.1;
export const READ_REST_SMALL_BYTES = 16 * 1024;
export const READ_REST_STREAMING_MS = 2;
export const READ_REST_IDLE_SHARE = 0.15;
export const READ_REST_WINDOW_MS = 100;

/**
 * Rests Pi's thread for {@link READ_REST_MS} between the small reads of a streaming pipe, so the next
 * read takes several of the producer's writes at once instead of one wakeup per 4 KiB write (the
 * constants above say why, and why so short).
 *
 * A rest helps only while the producer is the slower side: the loop then waits in its poll between
 * reads anyway, and a rest turns many of those wakeups into one. While the reader is the slower side
 * (a producer of 1 GB/s, or Pi busy with other work) a rest is time nobody reads: measured, 40 % longer
 * floods. So it rests only while the loop spent at least {@link READ_REST_IDLE_SHARE} of its last
 * window ({@link READ_REST_WINDOW_MS}) waiting in its poll, its own rests left out of the window.
 *
 * Pure: the clock, the loop's idle time and the sleep are given (tests step them).
 */
export interface RestClock {
  now(): number;
  /** The event loop's time spent waiting in its poll since it started, ms. */
  loopIdleMs(): number;
  /** Sleeps the thread. */
  sleep(ms: number): void;
}

/** A timed wait on a cell nobody signals: the thread sleeps, with no turn of the loop and no CPU. */
const restCell = new Int32Array(new SharedArrayBuffer(4));

export const threadRestClock: RestClock = {
  now: () => performance.now(),
  loopIdleMs: () => performance.eventLoopUtilization().idle,
  sleep: (ms) => void Atomics.wait(restCell, 0, 0, ms),
};

export class ReadRest {
  private windowStart: number;
  private idleAtStart: number;
  private restedMs = 0;
  /** What the last window said: the loop had time to spare. A first window is given the benefit of the doubt. */
  private spare = true;

  constructor(private readonly clock: RestClock = threadRestClock) {
    this.windowStart = clock.now();
    this.idleAtStart = clock.loopIdleMs();
  }

  /** After a small read of a streaming pipe: rests when the loop has had time to spare of late. True when it rested. */
  take(): boolean {
    this.review();
    if (!this.spare) return false;
    const before = this.clock.now();
    this.clock.sleep(READ_REST_MS);
    this.restedMs += this.clock.now() - before;
    return true;
  }

  /** At the end of a window: whether the loop waited in its poll for its share of the time it did not rest. */
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
