/**
 * What the host-death watchdog costs the Pi process, measured in this process with the real script:
 * the time one job's registration takes on the host (reading the leader's start time and writing one
 * line to the pipe), and the time a runtime's first job spends starting the watchdog (the spawn the
 * host waits for) and until the watchdog has recorded that first job.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Watchdog } from "../../src/core/supervision/watchdog.ts";

const REGISTRATIONS = 5_000;
const STARTS = 20;

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const median = (values: number[]) => percentile(values, 0.5);

const contains = (path: string, text: string) => {
  try {
    return readFileSync(path, "utf8").includes(text);
  } catch {
    return false;
  }
};

/**
 * Stops a watchdog and waits until it has exited (it writes its registry until then). `backlog`: it
 * still has thousands of lines to read, some 25 s of a shell's work that no figure measures, so it
 * is killed rather than asked to quit.
 */
async function dismiss(watchdog: Watchdog, backlog = false): Promise<void> {
  const pid = watchdog.pid;
  if (backlog && pid !== undefined) process.kill(pid, "SIGKILL");
  watchdog.stop();
  while (pid !== undefined && existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 5));
}

export interface WatchdogCost {
  registration_us: { mean: number; p99: number; max: number; count: number };
  start_ms: { spawn_median: number; first_job_recorded_median: number; starts: number };
}

export async function watchdogCost(): Promise<WatchdogCost> {
  const dir = mkdtempSync(join(tmpdir(), "piue-bench-watchdog-"));
  const leader = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
  try {
    const spawns: number[] = [];
    const recorded: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const registry = join(dir, `start-${i}`);
      const watchdog = new Watchdog(() => registry);
      const t0 = performance.now();
      watchdog.register(leader.pid!, "first job");
      while (!contains(registry, "first job")) await new Promise((resolve) => setImmediate(resolve));
      recorded.push(performance.now() - t0);
      spawns.push(watchdog.spawnMs!);
      await dismiss(watchdog);
    }

    // One watchdog, many jobs: each registration as the runtime makes it, then the group forgotten.
    const watchdog = new Watchdog(() => join(dir, "many"));
    watchdog.register(leader.pid!, "warm-up");
    const costs: number[] = [];
    for (let i = 0; i < REGISTRATIONS; i++) {
      const t0 = performance.now();
      watchdog.register(leader.pid!, `job ${i}`);
      costs.push((performance.now() - t0) * 1000);
      watchdog.forget(leader.pid!);
      // Let the pipe drain now and then, as it does between real jobs.
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await dismiss(watchdog, true);
    const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
    return {
      registration_us: {
        mean: round(mean(costs)),
        p99: round(percentile(costs, 0.99)),
        max: round(Math.max(...costs)),
        count: REGISTRATIONS,
      },
      start_ms: { spawn_median: round(median(spawns), 2), first_job_recorded_median: round(median(recorded), 2), starts: STARTS },
    };
  } finally {
    leader.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
