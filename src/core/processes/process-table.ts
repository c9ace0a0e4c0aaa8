/*
 * processes/ — the operating system's processes as the core sees them. At a glance:
 * 1. this file reads the process table (`/proc`, else `ps`), once per sweep (`oneTableFor`);
 * 2. process-group.ts signals a job's groups, proves them empty and names the signals;
 * 3. listening.ts finds what each job listens on and holds (socket-tables.ts: the machine's
 *    listeners) and keeps the one cache of what scans read; port-conflicts.ts: a port a job cannot get;
 * 4. spawn-gate.ts spawns one process per turn of the loop; fd-hygiene.ts: what every child starts with.
 *
 * May import: shared, output.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** Session id, where the platform tells it (Linux, and `ps` where its `sess` column is numeric). */
  sid?: number;
  /** Dead but not yet reaped: it holds a pid and answers `kill(pid, 0)`, yet runs nothing. */
  zombie: boolean;
  /** With the pid, names one process for good: Linux clock ticks since boot (numbers), else `ps`'s lstart with `_` (equality only). */
  start?: string;
  /** Whether `start` is Linux's clock ticks (numbers that order starts) rather than `ps`'s text. */
  startInTicks: boolean;
  /** Linux: the state letter (`R`, `S`, `D`, `Z`, …), the terminal's foreground group and the number of threads. */
  state?: string;
  tpgid?: number;
  threads?: number;
  /** Linux: minor faults, user and system time; unchanged, the process did not run (listening.ts trusts its descriptors). */
  activity?: string;
  /** Linux: resident memory in bytes and CPU time (user + system) in ms, from the same `stat` line. */
  rssBytes?: number;
  cpuMs?: number;
}

/** `stat` counts CPU time in USER_HZ ticks, 100 a second on every Linux architecture Node runs on. */
const MS_PER_TICK = 10;
let pageBytes: number | undefined;

/** The size of a memory page: this process's resident bytes over its resident pages (`statm`), rounded to a power of two. */
function pageSize(): number {
  if (pageBytes !== undefined) return pageBytes;
  try {
    const pages = Number(readFileSync("/proc/self/statm", "utf8").split(" ")[1]);
    pageBytes = 2 ** Math.round(Math.log2(process.memoryUsage.rss() / pages));
  } catch {
    pageBytes = 4096;
  }
  return pageBytes;
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

/**
 * The start time of `pid` on Linux (clock ticks since boot), undefined elsewhere or when it is gone.
 * Taken right after spawn it cannot name another process: Node reaps a child only in a later turn.
 */
export function linuxStartTime(pid: number): string | undefined {
  return process.platform === "linux" ? procStat(pid)?.[19] : undefined;
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
    table.push({
      pid: Number(entry),
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
      zombie: fields[0] === "Z" || fields[0] === "X",
      ...(fields[19] !== undefined ? { start: fields[19] } : {}),
      startInTicks: fields[19] !== undefined,
      state: fields[0]!,
      tpgid: Number(fields[5]),
      threads: Number(fields[17]),
      activity: `${fields[7]}:${fields[11]}:${fields[12]}`,
      rssBytes: Number(fields[21]) * pageSize(),
      cpuMs: (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK,
    });
  }
  return table;
}

function fromPs(): ProcessEntry[] | undefined {
  // lstart last: it is several words. LC_ALL=C keeps its words in one format.
  const ps = spawnSync("ps", ["-A", "-o", "pid=,ppid=,pgid=,sess=,stat=,lstart="], {
    encoding: "utf8",
    timeout: 10_000,
    env: { ...process.env, LC_ALL: "C" },
  });
  if (ps.status !== 0 || !ps.stdout) return undefined;
  const table: ProcessEntry[] = [];
  for (const line of ps.stdout.split("\n")) {
    const [pid, ppid, pgid, sess, stat, ...lstart] = line.trim().split(/\s+/);
    if (!pid || !/^\d+$/.test(pid)) continue;
    // Some `ps` print a kernel address rather than a session id; then sessions are unknown here.
    const sid = sess && /^\d+$/.test(sess) ? Number(sess) : undefined;
    table.push({
      pid: Number(pid),
      ppid: Number(ppid),
      pgid: Number(pgid),
      ...(sid !== undefined ? { sid } : {}),
      zombie: (stat ?? "").startsWith("Z"),
      ...(lstart.length >= 5 ? { start: lstart.slice(0, 5).join("_") } : {}),
      startInTicks: false,
    });
  }
  return table;
}

let tableReads = 0;

/** How many times this process read the whole process table (the benchmark and tests check when listings do). */
export function processTableReads(): number {
  return tableReads;
}

/** /proc where it has Linux's layout, else `ps`. */
function readTable(): ProcessEntry[] | undefined {
  tableReads++;
  return (process.platform === "linux" ? fromProc() : undefined) ?? fromPs();
}

/** The table of the sweep in progress (see {@link oneTableFor}), read on its first use. */
let sweep: { table?: ProcessEntry[] | undefined; read: boolean } | undefined;

/** Every process, or undefined where the table cannot be read (Windows). */
export function processTable(): ProcessEntry[] | undefined {
  if (process.platform === "win32") return undefined;
  if (!sweep) return readTable();
  if (!sweep.read) {
    sweep.table = readTable();
    sweep.read = true;
  }
  return sweep.table;
}

/** The table of the sweep in progress (read now if not yet), or undefined outside a sweep: a probe of one job then reads less than the whole table. */
export function sweepTable(): ProcessEntry[] | undefined {
  return sweep ? processTable() : undefined;
}

/** A table's processes by pid, by parent (living ones) and by session (living ones), built once per table. */
export interface TableIndex {
  byPid: Map<number, ProcessEntry>;
  children: Map<number, number[]>;
  bySession: Map<number, number[]>;
}

const indexes = new WeakMap<ProcessEntry[], TableIndex>();

export function tableIndex(table: ProcessEntry[]): TableIndex {
  let index = indexes.get(table);
  if (index) return index;
  index = { byPid: new Map(), children: new Map(), bySession: new Map() };
  const add = (map: Map<number, number[]>, key: number, pid: number) => {
    const list = map.get(key);
    if (list) list.push(pid);
    else map.set(key, [pid]);
  };
  for (const entry of table) {
    index.byPid.set(entry.pid, entry);
    if (entry.zombie) continue;
    add(index.children, entry.ppid, entry.pid);
    if (entry.sid !== undefined) add(index.bySession, entry.sid, entry.pid);
  }
  indexes.set(table, index);
  return index;
}

/** Runs `fn` (synchronous) with every {@link processTable} inside it answered by one read (sixteen jobs ending together read it once, not sixteen times). */
export function oneTableFor<T>(fn: () => T): T {
  if (sweep) return fn();
  sweep = { read: false };
  try {
    return fn();
  } finally {
    sweep = undefined;
  }
}

/** Living (non-zombie) descendants of `pid`, at any depth, following parent links. */
export function descendantsOf(pid: number, table: ProcessEntry[] | undefined = processTable()): number[] {
  if (!table) return [];
  const { children } = tableIndex(table);
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

/** The groups of session `sid` with a living member (a shell's background jobs too, not a `setsid`), or undefined where sessions are unknown. */
export function sessionGroups(sid: number, table: ProcessEntry[] | undefined = processTable()): number[] | undefined {
  if (!table) return undefined;
  const index = tableIndex(table);
  if (index.bySession.size === 0 && !table.some((entry) => entry.sid !== undefined)) return undefined;
  const groups = new Set<number>();
  for (const pid of index.bySession.get(sid) ?? []) groups.add(index.byPid.get(pid)!.pgid);
  return [...groups];
}

/** The living processes of group or session `id` (sessions unknown to `ps`: the group): what a finished shell left in the job. */
export function membersOf(id: number, scope: "group" | "session", table: ProcessEntry[] | undefined = processTable()): number[] {
  if (!table) return [];
  const bySession = scope === "session" && table.some((entry) => entry.sid !== undefined);
  return table.filter((entry) => !entry.zombie && (bySession ? entry.sid : entry.pgid) === id).map((entry) => entry.pid);
}

/** Whether `pid` still lives (not a zombie) in group or session `id`: one /proc file, or `kill(pid, 0)` elsewhere. */
export function stillMember(pid: number, id: number, scope: "group" | "session"): boolean {
  const fields = procStat(pid);
  if (fields) return fields[0] !== "Z" && fields[0] !== "X" && Number(fields[scope === "group" ? 2 : 3]) === id;
  if (process.platform === "linux") return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The command line `pid` runs, its arguments joined by spaces; undefined when it cannot be read. */
export function commandLineOf(pid: number): string | undefined {
  if (process.platform === "linux") {
    try {
      const raw = readFileSync(`/proc/${pid}/cmdline`);
      const text = raw.toString("utf8").replace(/\0+$/, "").replaceAll("\0", " ");
      return text || undefined;
    } catch {
      return undefined;
    }
  }
  if (process.platform === "win32") return undefined;
  const ps = spawnSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8", timeout: 5_000 });
  return ps.status === 0 ? ps.stdout.trim() || undefined : undefined;
}

/** Living processes but this one whose environment has `variable` starting with `prefix` (inherited through `setsid`); Linux only. */
export function processesWithEnvironment(variable: string, prefix: string): number[] {
  if (process.platform !== "linux") return [];
  const needle = Buffer.from(`${variable}=${prefix}`);
  const found: number[] = [];
  for (const entry of processTable() ?? []) {
    if (entry.zombie || entry.pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${entry.pid}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    const at = environ.indexOf(needle);
    if (at === 0 || (at > 0 && environ[at - 1] === 0)) found.push(entry.pid);
  }
  return found;
}
