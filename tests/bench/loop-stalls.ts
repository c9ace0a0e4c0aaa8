/**
 * How long the main thread's event loop stood still, and how much of that the thread spent waiting for
 * a core (Linux's per-thread scheduler statistics, `/proc/thread-self/schedstat`: time on a CPU and
 * time runnable but waiting). On a shared 2-core machine a loop pause is often the scheduler's: a
 * thread that is ready waits behind other processes. Sampled by a 5 ms interval timer: every gap
 * between two ticks is a pause; the longest is reported with the part of it the thread was runnable
 * but not running, and the longest pause less that part (what the thread itself was busy or blocked for).
 */
import { readFileSync } from "node:fs";

export interface LoopStalls {
  /** The longest gap between two ticks, ms. */
  longest_ms: number;
  /** The part of that gap the thread waited for a core, ms. */
  longest_waiting_ms: number;
  /** The longest gap less the wait for a core in it, ms (over all gaps). */
  longest_less_waiting_ms: number;
  /** All the time the thread waited for a core over the window, ms. */
  waiting_total_ms: number;
}

/** The calling thread's [ns on a CPU, ns waiting for one]; zeros where the kernel does not say. */
export function schedstat(): [number, number] {
  try {
    const [onCpu, waiting] = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
    return [onCpu ?? 0, waiting ?? 0];
  } catch {
    return [0, 0];
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** Starts sampling; `stop()` ends it and returns the figures. */
export function sampleStalls(tickMs = 5): { stop: () => LoopStalls } {
  const first = schedstat();
  let last = performance.now();
  let lastWaiting = first[1];
  const figures = { longest_ms: 0, longest_waiting_ms: 0, longest_less_waiting_ms: 0 };
  const tick = setInterval(() => {
    const now = performance.now();
    const waiting = schedstat()[1];
    const gap = now - last;
    const waited = (waiting - lastWaiting) / 1e6;
    if (gap > figures.longest_ms) Object.assign(figures, { longest_ms: gap, longest_waiting_ms: waited });
    figures.longest_less_waiting_ms = Math.max(figures.longest_less_waiting_ms, gap - waited);
    last = now;
    lastWaiting = waiting;
  }, tickMs);
  return {
    stop: () => {
      clearInterval(tick);
      return {
        longest_ms: round(figures.longest_ms),
        longest_waiting_ms: round(figures.longest_waiting_ms),
        longest_less_waiting_ms: round(figures.longest_less_waiting_ms),
        waiting_total_ms: round((schedstat()[1] - first[1]) / 1e6),
      };
    },
  };
}
