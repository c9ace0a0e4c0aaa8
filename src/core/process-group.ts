import { readdirSync, readFileSync } from "node:fs";

/**
 * POSIX process-group probes and signals. A pipe job's leader starts its own group (setsid), so its
 * pgid is its pid and the group outlives the leader while any descendant stays in it.
 */

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Sends `signal` to every member of the group. Returns false when the group has no members left
 * (ESRCH); any other failure (EPERM, an invalid signal) is thrown, because it means the job could not
 * be reached and the caller must say so.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === "ESRCH") return false;
    throw error;
  }
}

/** True when `kill(-pgid, 0)` finds members. EPERM means members exist that we may not signal. */
function groupHasMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) !== "ESRCH";
  }
}

/**
 * Process groups that have at least one member that is not a zombie, read from /proc in one pass, or
 * undefined where there is no /proc (macOS). Needed because `kill(-pgid, 0)` also counts zombies: an
 * orphaned descendant that died is reparented to PID 1, and where PID 1 does not reap (some container
 * and VM inits) the zombie stays forever and would make a finished group look alive.
 */
function groupsWithLivingMembers(): Set<number> | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const living = new Set<number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // the process ended while we looked
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && fields[0] !== "X") living.add(Number(fields[2]));
  }
  return living;
}

/** The groups among `pgids` that still have a living (non-zombie) member. */
export function aliveGroups(pgids: readonly number[]): number[] {
  const candidates = pgids.filter(groupHasMembers);
  if (candidates.length === 0) return candidates;
  const living = groupsWithLivingMembers();
  return living ? candidates.filter((pgid) => living.has(pgid)) : candidates;
}

/**
 * Resolves once every group is empty or the deadline passes, and returns the groups still alive.
 * Emptiness has no event to wait on, so it is re-checked every `intervalMs`.
 */
export async function waitForGroupsEmpty(pgids: readonly number[], timeoutMs: number, intervalMs: number): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  let alive = aliveGroups(pgids);
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(1, deadline - performance.now()))));
    alive = aliveGroups(alive);
  }
  return alive;
}
