import { readFileSync } from "node:fs";

/**
 * True while `pid` is a living process. A zombie does not count: where PID 1 does not reap orphans
 * (some container and VM inits) a killed descendant stays a zombie forever, yet `kill(pid, 0)` succeeds.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return true; // no /proc (macOS): launchd reaps orphans, so kill(pid, 0) is the answer
  }
}

/** Waits until `condition()` is true, checking every `intervalMs`; throws with `what` at the deadline. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Waits `ms` where the span itself is what a test shows: a process or stream stays as it was, a
 * timer does not fire. That no wake comes is read by settling and counting pending wakes instead
 * (`wakesSettled` in runtime.ts, `PiRpcHost.settle`); docs/testing.md ("Nothing more happens") says
 * where a span remains. With `check`, the span is watched instead of slept through: `check()` runs
 * at once and then every `everyMs` until the span ends, and throws to fail the test.
 */
export async function quietFor(ms: number, check?: () => void, everyMs = 50): Promise<void> {
  if (check === undefined) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return;
  }
  const end = performance.now() + ms;
  while (performance.now() < end) {
    check();
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Integers printed one per line in a job's output (pids the test command echoed). */
export function pidsIn(output: string): number[] {
  return output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}
