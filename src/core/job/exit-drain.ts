import { POST_EXIT_DRAIN_CAP_MS, POST_EXIT_DRAIN_MS } from "../shared/constants.ts";

/**
 * When a job's exit may be reported, if its output streams have not closed by then: once the stream
 * has been quiet for {@link POST_EXIT_DRAIN_MS} after the leader's exit, counting only time spent
 * reading. Every chunk restarts the quiet window, so the leader's last output is never cut off while
 * it is still being read (a busy machine reads it late); a descendant that prints without pause is cut
 * off after {@link POST_EXIT_DRAIN_CAP_MS} of reading, and its later output is still logged. While the
 * job's reading is paused (the log is catching up) the clock stands still: bytes waiting behind a slow
 * disk are not given up.
 *
 * A window that ran out is confirmed after the loop's next poll for I/O: a process the machine did not
 * run for longer than the window (a busy machine) runs its expired timers before it reads what arrived
 * meanwhile, so the timer alone would report the exit with the leader's last output still in the
 * kernel (measured: a PTY job's last 178 lines, beside CPU burners). A chunk read in that poll starts
 * the window over.
 */
export class ExitDrain {
  private state: "idle" | "running" | "paused" | "done" = "idle";
  private quietTimer: NodeJS.Timeout | undefined;
  private capTimer: NodeJS.Timeout | undefined;
  /** Reading time left before the cap, and when the current running stretch started. */
  private capLeftMs = POST_EXIT_DRAIN_CAP_MS;
  private runningSince = 0;
  /** Chunks seen, so a window that ran out can tell whether the next poll read any. */
  private chunks = 0;

  constructor(private readonly done: () => void) {}

  /** The leader exited: start the clock (paused if reading is paused). */
  start(paused: boolean): void {
    if (this.state !== "idle") return;
    this.state = "paused";
    if (!paused) this.resume();
  }

  /** A chunk arrived: the quiet window starts over. */
  data(): void {
    this.chunks++;
    if (this.state === "running") this.armQuiet();
  }

  pause(): void {
    if (this.state !== "running") return;
    this.state = "paused";
    this.capLeftMs -= performance.now() - this.runningSince;
    this.clearTimers();
  }

  resume(): void {
    if (this.state !== "paused") return;
    this.state = "running";
    this.runningSince = performance.now();
    this.armQuiet();
    this.capTimer = setTimeout(() => this.finish(), Math.max(0, this.capLeftMs));
  }

  /** The streams closed first, or the job is being torn down: the drain is over. */
  cancel(): void {
    this.state = "done";
    this.clearTimers();
  }

  private armQuiet(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.confirmQuiet(), POST_EXIT_DRAIN_MS);
  }

  /** The window ran out by the clock: quiet only if the next poll for I/O reads nothing either (immediates run right after it). */
  private confirmQuiet(): void {
    const seen = this.chunks;
    setImmediate(() => {
      if (this.chunks === seen) this.finish();
    });
  }

  private finish(): void {
    if (this.state !== "running") return;
    this.cancel();
    this.done();
  }

  private clearTimers(): void {
    clearTimeout(this.quietTimer);
    clearTimeout(this.capTimer);
  }
}
