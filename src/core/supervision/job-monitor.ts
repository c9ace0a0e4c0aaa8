import { totalmem } from "node:os";
import type { Job } from "../job/job.ts";
import type { Deafness, Usage } from "../processes/listening.ts";
import { oneTableFor } from "../processes/process-table.ts";
import { MAX_JOB_RSS_ENV } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";

/**
 * What the runtime watches once a second while jobs run (SPEC §3c, §6): a job whose processes
 * together hold more resident memory than the cap is stopped (`killed_by: memory`), and a server gone
 * deaf sends one notice per loss. One read of the process table serves both: a tick costs 2 ms
 * with one job, 10–14 ms with 64 jobs of 10 processes. Memory is read on Linux only; elsewhere
 * nothing is stopped.
 */

const MB = 1024 * 1024;
const TICK_MS = 1_000;

/** The cap in bytes: `PI_UNIFIED_EXEC_MAX_JOB_RSS_MB` (the person's setting, `0` off), else half the machine's memory. */
export function memoryCap(env: NodeJS.ProcessEnv = process.env, machineBytes: number = totalmem()): number | undefined {
  const mb = wholeNumber(env[MAX_JOB_RSS_ENV], 0);
  if (mb === 0) return undefined;
  return mb !== undefined ? mb * MB : Math.floor(machineBytes / 2);
}

/** What the monitor needs of the runtime. */
export interface MonitorHost {
  /** The running jobs. */
  running(): Job[];
  /** Their memory now (undefined where it cannot be read). */
  measure(jobs: readonly Job[]): Map<number, Usage> | undefined;
  /** The servers gone deaf among `jobs` (only jobs that listened are scanned). */
  deafness(jobs: readonly Job[]): Map<number, Deafness>;
  overCap(job: Job, usage: Usage, capBytes: number): void;
  /** A server went deaf, once per loss. */
  deaf(job: Job, deafness: Deafness): void;
}

export class JobMonitor {
  private timer: NodeJS.Timeout | undefined;
  /** Per job, the loss already told (when it was first seen closed): again only after it listened again. */
  private readonly told = new Map<number, number>();
  /** Ticks that looked at jobs (tests wait for one more to see that nothing more happens). */
  ticks = 0;

  constructor(
    private readonly host: MonitorHost,
    /** See {@link memoryCap}; undefined: no cap. */
    private readonly capBytes: number | undefined,
    private readonly intervalMs: number = TICK_MS,
  ) {}

  /** A job started: watch while some job runs. */
  poke(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at every running job. */
  tick(): void {
    const jobs = this.host.running();
    if (jobs.length === 0) {
      this.stop();
      return;
    }
    this.ticks++;
    oneTableFor(() => {
      if (this.capBytes !== undefined) this.checkMemory(jobs, this.capBytes);
      this.checkHearing(jobs);
    });
  }

  private checkMemory(jobs: readonly Job[], capBytes: number): void {
    const usage = this.host.measure(jobs);
    for (const job of jobs) {
      const used = usage?.get(job.id);
      if (used && used.rssBytes > capBytes) this.host.overCap(job, used, capBytes);
    }
  }

  private checkHearing(jobs: readonly Job[]): void {
    const deaf = this.host.deafness(jobs);
    for (const jobId of this.told.keys()) if (!deaf.has(jobId)) this.told.delete(jobId);
    for (const job of jobs) {
      const loss = deaf.get(job.id);
      if (!loss || this.told.get(job.id) === loss.closedAt) continue;
      this.told.set(job.id, loss.closedAt);
      this.host.deaf(job, loss);
    }
  }
}
