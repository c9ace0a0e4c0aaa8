import { spawnSync } from "node:child_process";
import { win32 } from "node:path";
import { processTable, procStat, sessionGroups } from "./process-table.ts";

/**
 * Process-group probes and signals. A pipe job's leader starts its own group (setsid), and a PTY
 * job's shell leads its own session, so the group id is the leader's pid and the group outlives the
 * leader while any descendant stays in it. Windows has no groups: a kill there ends the process tree
 * with `taskkill /T /F`.
 */

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** `taskkill` by absolute path (a bare name could be found in the job's workdir first). */
export function taskkillCommand(pid: number, env: NodeJS.ProcessEnv = process.env): { file: string; args: string[] } {
  const systemRoot = env.SystemRoot ?? env.SYSTEMROOT ?? "C:\\Windows";
  return { file: win32.join(systemRoot, "System32", "taskkill.exe"), args: ["/PID", String(pid), "/T", "/F"] };
}

function killWindowsTree(pid: number): boolean {
  const { file, args } = taskkillCommand(pid);
  const result = spawnSync(file, args, { windowsHide: true, encoding: "utf8", timeout: 10_000 });
  if (result.error) throw result.error;
  if (result.status === 0) return true;
  if (result.status === 128) return false; // no such process: already gone
  throw new Error(`taskkill exited with ${result.status}: ${(result.stderr || result.stdout).trim()}`);
}

/**
 * Sends `signal` to every member of the group (on Windows: ends the process tree, whatever the
 * signal). Returns false when the group has no members left; any other failure (EPERM, an invalid
 * signal) is thrown, because it means the job could not be reached and the caller must say so.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals, platform: NodeJS.Platform = process.platform): boolean {
  if (platform === "win32") return killWindowsTree(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === "ESRCH") return false;
    throw error;
  }
}

/** True when `kill(-pgid, 0)` finds members. EPERM means members exist that we may not signal. */
export function groupHasMembers(pgid: number): boolean {
  try {
    process.kill(process.platform === "win32" ? pgid : -pgid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) !== "ESRCH";
  }
}

/**
 * The groups among `pgids` that still have a living (non-zombie) member. `kill(-pgid, 0)` answers
 * first; the process table then rules out groups of zombies only: an orphaned descendant that died is
 * reparented to PID 1, and where PID 1 does not reap (some container and VM inits) the zombie stays
 * forever and would make a finished group look alive.
 */
export function aliveGroups(pgids: readonly number[]): number[] {
  const candidates = pgids.filter(groupHasMembers);
  if (candidates.length === 0) return candidates;
  const table = processTable();
  if (!table) return candidates;
  const living = new Set(table.filter((entry) => !entry.zombie).map((entry) => entry.pgid));
  return candidates.filter((pgid) => living.has(pgid));
}

/**
 * The foreground process group of the terminal `pid` controls (a PTY job's shell), or undefined.
 * A shell with job control moves a running program into its own group; Ctrl-C and a kill must reach
 * that group too, not only the shell's.
 */
export function foregroundGroup(pid: number): number | undefined {
  const fields = procStat(pid);
  let tpgid: number;
  if (fields) tpgid = Number(fields[5]);
  else if (process.platform === "win32") return undefined;
  else {
    const ps = spawnSync("ps", ["-o", "tpgid=", "-p", String(pid)], { encoding: "utf8", timeout: 5_000 });
    tpgid = Number(ps.stdout?.trim());
  }
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : undefined;
}

/**
 * Every process group a signal to a job must reach. The leader starts a session of its own (pipes:
 * setsid; PTYs: the terminal's session), so these are its session's groups, an interactive shell's
 * background jobs included, and always the leader's own. Where sessions are not visible, the leader's
 * group and, for a terminal, its foreground group (a job-control shell moves a running program there).
 */
export function jobGroups(leader: number): number[] {
  if (process.platform === "win32") return [leader];
  const session = sessionGroups(leader);
  if (session) return [leader, ...session.filter((pgid) => pgid !== leader)];
  const foreground = foregroundGroup(leader);
  return foreground !== undefined && foreground !== leader ? [leader, foreground] : [leader];
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
