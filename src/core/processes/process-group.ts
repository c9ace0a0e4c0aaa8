import { spawnSync } from "node:child_process";
import { win32 } from "node:path";
import { metadataLine } from "../output/visible-text.ts";
import { ExecRequestError } from "../shared/errors.ts";
import { processTable, procStat, sessionGroups } from "./process-table.ts";

/**
 * A job's process groups: their signals, emptiness and names. A job's leader leads its own session
 * and group (pid = pgid = sid), which outlives it while a descendant stays in it. Windows has no
 * groups: a kill there ends the process tree with `taskkill /T /F`.
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

/** Signals every member of the group (Windows: ends the tree); false when none is left, a throw when it cannot be reached. */
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
 * The groups among `pgids` with a living member: `kill(-pgid, 0)` first, then the table rules out
 * groups of zombies only (where PID 1 does not reap, as in some containers, they stay forever).
 */
export function aliveGroups(pgids: readonly number[]): number[] {
  const candidates = pgids.filter(groupHasMembers);
  if (candidates.length === 0) return candidates;
  const table = processTable();
  if (!table) return candidates;
  const living = new Set(table.filter((entry) => !entry.zombie).map((entry) => entry.pgid));
  return candidates.filter((pgid) => living.has(pgid));
}

/** The foreground group of the terminal `pid` controls (a job-control shell's running program): a kill must reach it too. */
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

/** Every group a signal to a job must reach: its session's (the leader's first), else the leader's and the terminal's foreground group. */
export function jobGroups(leader: number): number[] {
  if (process.platform === "win32") return [leader];
  const session = sessionGroups(leader);
  if (session) return [leader, ...session.filter((pgid) => pgid !== leader)];
  const foreground = foregroundGroup(leader);
  return foreground !== undefined && foreground !== leader ? [leader, foreground] : [leader];
}

/** The groups still alive once all are empty or `timeoutMs` passed (emptiness has no event: checked every `intervalMs`). */
export async function waitForGroupsEmpty(pgids: readonly number[], timeoutMs: number, intervalMs: number): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  let alive = aliveGroups(pgids);
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(1, deadline - performance.now()))));
    alive = aliveGroups(alive);
  }
  return alive;
}

/** Signals `kill_session` accepts: the ones that ask a process to end. */
export const KILL_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL"] as const;
export type KillSignal = (typeof KILL_SIGNALS)[number];

/**
 * A signal name as a model may write it (`term`, `INT`, `sigkill`, `SIGHUP`) in canonical form.
 * Numbers are refused: their meaning differs between platforms (SIGUSR1 is 10 on Linux, 30 on macOS).
 */
export function normalizeSignal(raw: string): KillSignal {
  const upper = raw.trim().toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  if ((KILL_SIGNALS as readonly string[]).includes(name)) return name as KillSignal;
  const why = /^\d+$/.test(raw.trim()) ? "signal numbers differ between platforms; use a name" : `unknown signal "${metadataLine(raw)}"`;
  throw new ExecRequestError(`kill_session: ${why}. Accepted: ${KILL_SIGNALS.join(", ")} (also written as TERM, int, sigkill…).`);
}
