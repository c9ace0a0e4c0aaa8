import { processTable, procStat } from "./process-table.ts";

/**
 * Which process a pid names, and which process groups are still the ones a runtime started. A pid
 * alone proves nothing once its process is gone (pids are reused, on Linux from as few as 32 768);
 * a pid with its start time names one process for good. These are the rules the watchdog script
 * (`watchdog.sh`) applies in sh, written once more for the startup sweep, which runs in the host.
 */

/** A process as identity checks see it. `sid` is unknown where `ps` cannot tell it (macOS). */
export interface ProcessIdentity {
  pid: number;
  pgid: number;
  sid: number | undefined;
  /** Linux: clock ticks since boot (`/proc/<pid>/stat` field 22); elsewhere `ps`'s lstart, spaces made `_`. */
  start: string;
  zombie: boolean;
}

/**
 * The start time of `pid` on Linux, read from /proc (tens of microseconds); undefined elsewhere or
 * when the process is gone. Taken right after spawn, it cannot name another process: Node reaps a
 * pipe child only in a later turn of the event loop, so the pid is still the child's (or its zombie's).
 */
export function linuxStartTime(pid: number): string | undefined {
  if (process.platform !== "linux") return undefined;
  return procStat(pid)?.[19];
}

/**
 * Every process with its identity, or undefined where none can be read (Windows, no /proc and no ps).
 * Sessions count only where start times are clock ticks (Linux): the rules below compare a session's
 * members' starts with a bound, which `ps`'s lstart text cannot do.
 */
export function identitySnapshot(): ProcessIdentity[] | undefined {
  const table = processTable();
  if (!table) return undefined;
  const identities: ProcessIdentity[] = [];
  for (const entry of table) {
    if (entry.start === undefined) continue;
    identities.push({
      pid: entry.pid,
      pgid: entry.pgid,
      sid: entry.startInTicks ? entry.sid : undefined,
      start: entry.start,
      zombie: entry.zombie,
    });
  }
  return identities;
}

/** What a registry says about one job's group. */
export interface RegisteredGroup {
  pgid: number;
  /** The leader's start time when registered; "-" when it was already gone. */
  leaderStart: string;
  /**
   * Linux: the latest moment (in start-time ticks) the group is known to have been whole, i.e. to
   * hold no process started after its leader's exit. A group that took the id later holds only
   * processes started after it.
   */
  bound: number | undefined;
}

/**
 * The groups to signal for `group` if it is still the one a runtime started; none otherwise. Still
 * ours: the leader is the same process (pid and start time), or, with the leader gone, some member
 * of its session (Linux) started no later than `bound`. Where sessions cannot be read (macOS), a
 * group whose leader is gone counts as ours while it has members: a group id is never handed out
 * while a process holds it. Zombies prove a group never ended but are not signalled.
 */
export function ownedGroups(group: RegisteredGroup, table: readonly ProcessIdentity[]): number[] {
  const { pgid } = group;
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return [];
  const leader = table.find((entry) => entry.pid === pgid);
  const members = table.filter((entry) => entry.pgid === pgid || entry.sid === pgid);
  if (leader) {
    if (leader.start !== group.leaderStart) return [];
  } else if (members.some((entry) => entry.sid !== undefined)) {
    const bound = group.bound;
    if (bound === undefined || !members.some((entry) => Number(entry.start) <= bound)) return [];
  }
  return [...new Set(members.filter((entry) => !entry.zombie).map((entry) => entry.pgid))];
}
