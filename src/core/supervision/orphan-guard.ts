/*
 * supervision/ — nothing a runtime started outlives it. At a glance:
 * 1. before the first spawn, the sweep stops what dead Pi processes left (leftovers.ts);
 * 2. each job is tracked until its groups are proven empty (tracked-jobs.ts) and registered with
 *    the runtime's watchdog process (watchdog.ts, watchdog.sh, its registry in watchdog-registry.ts);
 * 3. shutdown stops every tracked group, holding SIGTERM/SIGHUP meanwhile (tracked-jobs.ts);
 * 4. a Node exit without shutdown SIGKILLs what is left (the exit guard, this file), and a Pi that
 *    dies is covered by its watchdog;
 * 5. while jobs run, job-monitor.ts stops one over the memory cap and tells of a server gone deaf.
 *
 * May import: shared, processes, log, job.
 */
import { join } from "node:path";
import type { LogDirectory } from "../log/job-log.ts";
import { leftoverNotice, retentionDays, sweepLeftovers } from "./leftovers.ts";
import { Watchdog } from "./watchdog.ts";
import { REGISTRY_FILE } from "./watchdog-registry.ts";

/** Installed once per process, across `/reload`: an `exit` handler cannot wait for a graceful stop. */
const EXIT_GUARD = Symbol.for("pi-unified-exec/exit-guard");

/** Protects `runtime` until `release` is called (its orderly shutdown): one process-wide `exit` handler SIGKILLs what is left. */
export function guardAtExit(runtime: { killNow(): void }): () => void {
  const holder = globalThis as { [EXIT_GUARD]?: Set<{ killNow(): void }> };
  if (!holder[EXIT_GUARD]) {
    const guarded = new Set<{ killNow(): void }>();
    holder[EXIT_GUARD] = guarded;
    process.once("exit", () => {
      for (const each of guarded) each.killNow();
    });
  }
  const guarded = holder[EXIT_GUARD];
  guarded.add(runtime);
  return () => guarded.delete(runtime);
}

/** What the guard needs of a job. */
export interface GuardedJob {
  /** The leader, whose pid is also its process group and session id. */
  pid: number | undefined;
  command: string;
}

/** What the runtime calls to keep its jobs from outliving Pi; it never throws, and delays only the first job (the sweep). */
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
