import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * The operating system's process table, as far as evidence about a job's processes needs it: who is
 * alive (zombies are not), who belongs to which group, who descends from whom. Read from /proc on
 * Linux and from `ps` elsewhere on POSIX; Windows has no such view here.
 */

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** Dead but not yet reaped: it holds a pid and answers `kill(pid, 0)`, yet runs nothing. */
  zombie: boolean;
}

/** The fields after the command name in `/proc/<pid>/stat` (state, ppid, pgrp, session, tty, tpgid, …). */
export function procStat(pid: string | number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses, so parse after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function fromProc(): ProcessEntry[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const table: ProcessEntry[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry); // undefined when the process ended while we looked
    if (!fields) continue;
    table.push({ pid: Number(entry), ppid: Number(fields[1]), pgid: Number(fields[2]), zombie: fields[0] === "Z" || fields[0] === "X" });
  }
  return table;
}

function fromPs(): ProcessEntry[] | undefined {
  const ps = spawnSync("ps", ["-A", "-o", "pid=,ppid=,pgid=,stat="], { encoding: "utf8", timeout: 5_000 });
  if (ps.status !== 0 || !ps.stdout) return undefined;
  const table: ProcessEntry[] = [];
  for (const line of ps.stdout.split("\n")) {
    const [pid, ppid, pgid, stat] = line.trim().split(/\s+/);
    if (!pid || !/^\d+$/.test(pid)) continue;
    table.push({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), zombie: (stat ?? "").startsWith("Z") });
  }
  return table;
}

/** Every process, or undefined where the table cannot be read (Windows). */
export function processTable(): ProcessEntry[] | undefined {
  if (process.platform === "win32") return undefined;
  return fromProc() ?? fromPs();
}

/** Living (non-zombie) descendants of `pid`, at any depth, following parent links. */
export function descendantsOf(pid: number, table: ProcessEntry[] | undefined = processTable()): number[] {
  if (!table) return [];
  const children = new Map<number, number[]>();
  for (const entry of table) {
    if (entry.zombie) continue;
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry.pid);
    else children.set(entry.ppid, [entry.pid]);
  }
  const found: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    found.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
}

/** The pids among `pids` that are still living processes (zombies do not count). */
export function livingPids(pids: readonly number[], table: ProcessEntry[] | undefined = processTable()): number[] {
  if (!table) return [...pids];
  const living = new Set(table.filter((entry) => !entry.zombie).map((entry) => entry.pid));
  return pids.filter((pid) => living.has(pid));
}
