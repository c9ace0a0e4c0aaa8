/**
 * Process identity as the watchdog tests check it, independently of the code under test: a
 * process's start time (Linux: `/proc/<pid>/stat` field 22; elsewhere `ps`'s lstart, spaces made
 * `_`), its group, and the members of a group.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const linux = process.platform === "linux";

function procFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function ps(args: string[]): string {
  return spawnSync("ps", args, { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } }).stdout ?? "";
}

/** The start time of a living process, in the form the watchdog records. */
export function startTimeOf(pid: number): string {
  const start = linux
    ? procFields(pid)?.[19]
    : ps(["-o", "lstart=", "-p", String(pid)])
        .trim()
        .split(/\s+/)
        .join("_");
  if (!start) throw new Error(`process ${pid} is gone`);
  return start;
}

/** A start time that differs from `start` (no process has it). */
export function otherStartThan(start: string): string {
  return linux ? String(Number(start) + 1) : `${start}_other`;
}

/** The process group of `pid`. */
export function groupOf(pid: number): number | undefined {
  const pgid = linux ? procFields(pid)?.[2] : ps(["-o", "pgid=", "-p", String(pid)]).trim();
  return pgid ? Number(pgid) : undefined;
}

/** The session of `pid` (Linux only; undefined elsewhere). */
export function sessionOf(pid: number): number | undefined {
  const sid = linux ? procFields(pid)?.[3] : undefined;
  return sid ? Number(sid) : undefined;
}

/** Every process in group `pgid`, its leader included if it still exists. */
export function groupMembers(pgid: number): number[] {
  if (!linux) {
    return ps(["-A", "-o", "pid=,pgid="])
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter(([pid, group]) => group === pgid && pid !== undefined)
      .map(([pid]) => pid!);
  }
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => Number(procFields(pid)?.[2]) === pgid);
}
