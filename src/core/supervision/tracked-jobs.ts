import type { Job } from "../job/job.ts";
import { aliveGroups, signalGroup, waitForGroupsEmpty } from "../processes/process-group.ts";
import { oneTableFor, processesWithEnvironment, processTable } from "../processes/process-table.ts";
import { GROUP_PROBE_INTERVAL_MS, JOB_MARKER_ENV, SHUTDOWN_GRACE_MS } from "../shared/constants.ts";
import type { OrphanGuard } from "./orphan-guard.ts";

/** After SIGKILL at shutdown, how long to wait for the kernel to confirm the groups are gone. */
const KILL_CONFIRM_MS = 1_000;

/** What stopping everything did, for the caller to log or test. */
export interface ShutdownReport {
  terminated: number;
  killed: number;
  /** Groups still alive after SIGKILL (a process in uninterruptible sleep, or one we may not signal). */
  survivors: number[];
  /** Descendants that had left their job's groups (setsid), found by the job marker and stopped too. */
  escaped: number[];
  /** Signals that could not be sent, with the reason. */
  errors: string[];
}

/**
 * Every job of a runtime whose processes may still exist, registered or not, until its exit is
 * final, its groups proven empty and its streams closed: shutdown, boundaries and the exit guard
 * reach through here the background of a job reported long ago, and by its marker what left its session.
 */
export class TrackedJobs {
  private readonly jobs = new Set<Job>();

  constructor(
    /** This runtime's marker, the value every job's {@link JOB_MARKER_ENV} starts with. */
    private readonly token: string,
    private readonly orphans: OrphanGuard,
  ) {}

  add(job: Job): void {
    this.jobs.add(job);
    this.orphans.started(job);
  }

  /** A tracked job by id whose exit was reported but whose groups may linger. */
  exited(jobId: number): Job | undefined {
    return [...this.jobs].find((job) => job.id === jobId && job.exit);
  }

  /** Exited jobs, among `except`'s complement, whose groups still have living members. */
  lingering(except: readonly Job[]): Job[] {
    return [...this.jobs].filter((job) => job.exit && !except.includes(job) && aliveGroups(job.groups()).length > 0);
  }

  /** Every tracked job. */
  all(): Job[] {
    return [...this.jobs];
  }

  /**
   * SIGTERM to every live group (escaped descendants' too), the grace, SIGKILL to survivors, then our
   * end of every stream closed: a daemon holding one cannot keep a print or JSON run from exiting.
   */
  async stopAll(): Promise<ShutdownReport> {
    const errors: string[] = [];
    const send = (pgid: number, signal: NodeJS.Signals) => {
      try {
        signalGroup(pgid, signal);
      } catch (error) {
        errors.push(`${signal} to process group ${pgid} failed: ${(error as Error).message}`);
      }
    };
    const jobGroups = this.liveGroups();
    const escaped = this.escapees(jobGroups);
    const groups = [...new Set([...jobGroups, ...escaped.map(({ pgid }) => pgid)])];
    for (const pgid of groups) send(pgid, "SIGTERM");
    const stubborn = await waitForGroupsEmpty(groups, SHUTDOWN_GRACE_MS, GROUP_PROBE_INTERVAL_MS);
    for (const pgid of stubborn) send(pgid, "SIGKILL");
    const survivors = await waitForGroupsEmpty(stubborn, KILL_CONFIRM_MS, GROUP_PROBE_INTERVAL_MS);
    for (const job of this.jobs) job.closeStreams();
    this.prune();
    return { terminated: groups.length, killed: stubborn.length, survivors, escaped: escaped.map(({ pid }) => pid), errors };
  }

  /** At process exit, with no time left for grace: SIGKILL to every group still alive. */
  killNow(): void {
    for (const job of this.jobs) {
      for (const pgid of job.groups()) {
        try {
          signalGroup(pgid, "SIGKILL");
        } catch {
          // The process is exiting; there is no one left to report to.
        }
      }
    }
  }

  /** Jobs tracked now (running, or over and not yet proven gone). */
  get size(): number {
    return this.jobs.size;
  }

  /**
   * Forgets jobs that are over, their groups proven empty (never named again: ids are reused) and
   * their streams closed (one a daemon holds stays, so shutdown closes our end).
   */
  prune(): void {
    const finished = [...this.jobs].filter((job) => job.exit);
    const groups = oneTableFor(() => new Map(finished.map((job) => [job, job.groups()])));
    const alive = new Set(aliveGroups([...groups.values()].flat()));
    for (const job of finished) {
      if (groups.get(job)!.some((group) => alive.has(group))) continue;
      job.noteGroupsEnded();
      if (job.streamsOpen) continue;
      this.jobs.delete(job);
      this.orphans.forgotten(job);
    }
  }

  /** Process groups of tracked jobs that still have living members, deduplicated. */
  private liveGroups(): number[] {
    this.prune();
    return aliveGroups([...new Set([...this.jobs].flatMap((job) => job.groups()))]);
  }

  /** Living processes outside `groups` that carry this runtime's job marker, with their own groups. */
  private escapees(groups: readonly number[]): { pid: number; pgid: number }[] {
    const marked = new Set(processesWithEnvironment(JOB_MARKER_ENV, `${this.token}:`));
    if (marked.size === 0) return [];
    const ours = new Set(groups);
    return (processTable() ?? []).filter((entry) => marked.has(entry.pid) && !ours.has(entry.pgid)).map(({ pid, pgid }) => ({ pid, pgid }));
  }
}

/**
 * Holds SIGTERM and SIGHUP while the runtime stops its jobs, so a signal cannot cut their grace short
 * (Pi 1.4.0's RPC mode drops its handlers when stdin closes, and process managers send SIGTERM with
 * it); once done, with no other handler left, the process ends as that signal would have ended it.
 */
const HELD: readonly NodeJS.Signals[] = ["SIGTERM", "SIGHUP"];

export async function holdSignalsWhile<T>(work: () => Promise<T>): Promise<T> {
  if (process.platform === "win32") return work();
  let received: NodeJS.Signals | undefined;
  const handlers = HELD.map((signal) => {
    const handler = () => {
      received ??= signal;
    };
    process.on(signal, handler);
    return { signal, handler };
  });
  try {
    return await work();
  } finally {
    for (const { signal, handler } of handlers) process.off(signal, handler);
    // With no handler left the default action applies: the process ends by that signal, as it would have.
    if (received && process.listenerCount(received) === 0) process.kill(process.pid, received);
  }
}
