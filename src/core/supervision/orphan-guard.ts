/*
 * supervision/ — nothing a runtime started outlives it: the jobs whose processes may still exist
 * (tracked-jobs), the watchdog process and its registry, the sweep of what a dead Pi left
 * (leftovers), the process-wide exit guard, and the calls the runtime makes (this file).
 *
 * May import: shared, processes, log, job.
 */
import { join } from "node:path";
import type { LogDirectory } from "../log/job-log.ts";
import { leftoverNotice, retentionDays, sweepLeftovers } from "./leftovers.ts";
import { Watchdog } from "./watchdog.ts";
import { REGISTRY_FILE } from "./watchdog-registry.ts";

/** What the guard needs of a job. */
export interface GuardedJob {
  /** The leader, whose pid is also its process group and session id. */
  pid: number | undefined;
  command: string;
}

/**
 * Keeps one runtime's jobs from outliving the Pi process, for the runtime to call at a few points:
 * before its first spawn (sweep what earlier Pi processes left, once), after each spawn (register
 * the group with the watchdog), at each leader exit, when a group is proven empty (forget it), when
 * no call is starting a job (what could wait goes to the watchdog), and after an orderly shutdown
 * (dismiss the watchdog). It never throws and never delays a job beyond
 * the first one's sweep.
 */
export class OrphanGuard {
  readonly watchdog: Watchdog;
  private prepared: Promise<void> | undefined;
  private notice: string | undefined;
  /** Directories the startup sweep removed for retention, once known (tests and the curious). */
  removed: Promise<string[]> = Promise.resolve([]);

  constructor(
    private readonly logs: LogDirectory,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.watchdog = new Watchdog(() => {
      try {
        return join(logs.path(), REGISTRY_FILE);
      } catch {
        return undefined; // no log directory: the watchdog still watches, without a registry
      }
    });
  }

  /** Once per runtime, before its first spawn: stops what dead runtimes left and applies the log retention. */
  prepare(): Promise<void> {
    this.prepared ??= this.sweep();
    return this.prepared;
  }

  private async sweep(): Promise<void> {
    if (process.platform === "win32") return;
    try {
      const result = await sweepLeftovers(this.logs.config.parent, retentionDays(this.env));
      this.notice = leftoverNotice(result);
      this.removed = result.removed.catch(() => []);
    } catch {
      // Housekeeping must never cost a job; the next runtime tries again.
    }
  }

  started(job: GuardedJob): void {
    if (job.pid !== undefined) this.watchdog.register(job.pid, job.command);
  }

  leaderExited(job: GuardedJob): void {
    if (job.pid !== undefined) this.watchdog.leaderExited(job.pid);
  }

  forgotten(job: GuardedJob): void {
    if (job.pid !== undefined) this.watchdog.forget(job.pid);
  }

  /** No call is starting a job: the watchdog hears what could wait (in a later turn, after the call's result). */
  callsPaused(): void {
    setImmediate(() => this.watchdog.flush());
  }

  /** After the runtime stopped its jobs in order; settles when the watchdog has exited. */
  stop(): Promise<void> {
    return this.watchdog.stop();
  }

  /** What the sweep stopped, for the first result that asks; undefined afterwards. */
  takeNotice(): string | undefined {
    const notice = this.notice;
    this.notice = undefined;
    return notice;
  }
}
