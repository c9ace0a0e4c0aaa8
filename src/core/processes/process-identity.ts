import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { procStat } from "./process-table.ts";

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

const isLinux = () => process.platform === "linux";

/**
 * The start time of `pid` on Linux, read from /proc (tens of microseconds); undefined elsewhere or
 * when the process is gone. Taken right after spawn, it cannot name another process: Node reaps a
 * pipe child only in a later turn of the event loop, so the pid is still the child's (or its zombie's).
 */
export function linuxStartTime(pid: number): string | undefined {
  if (!isLinux()) return undefined;
  return procStat(pid)?.[19];
}

function fromProc(): ProcessIdentity[] | undefined {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const table: ProcessIdentity[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const fields = procStat(name);
    if (!fields || fields.length < 20) continue;
    table.push({
      pid: Number(name),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
      start: fields[19]!,
      zombie: fields[0] === "Z" || fields[0] === "X",
    });
  }
  return table;
}

function fromPs(): ProcessIdentity[] | undefined {
  const ps = spawnSync("ps", ["-A", "-o", "pid=,pgid=,stat=,lstart="], {
    encoding: "utf8",
    timeout: 10_000,
    env: { ...process.env, LC_ALL: "C" },
  });
  if (ps.status !== 0 || !ps.stdout) return undefined;
  const table: ProcessIdentity[] = [];
  for (const line of ps.stdout.split("\n")) {
    const [pid, pgid, stat, ...lstart] = line.trim().split(/\s+/);
    if (!pid || !/^\d+$/.test(pid) || lstart.length < 5) continue;
    table.push({
      pid: Number(pid),
      pgid: Number(pgid),
      sid: undefined,
      start: lstart.slice(0, 5).join("_"),
      zombie: (stat ?? "").startsWith("Z"),
    });
  }
  return table;
}

/** Every process with its identity, or undefined where none can be read (Windows, no /proc and no ps). */
export function identitySnapshot(): ProcessIdentity[] | undefined {
  if (process.platform === "win32") return undefined;
  return (isLinux() ? fromProc() : undefined) ?? fromPs();
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
