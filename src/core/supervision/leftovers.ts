import { constants as fsConstants } from "node:fs";
import { lstat, open, readdir, readFile, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { processTable } from "../processes/process-table.ts";
import {
  GROUP_PROBE_INTERVAL_MS,
  LOG_RETENTION_DAYS,
  LOG_RETENTION_ENV,
  WARM_SHELL_NAME,
  WATCHDOG_KILL_GRACE_MS,
} from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";
import {
  type ProcessRef,
  parseRegistry,
  REGISTRY_FILE,
  type RegisteredGroup,
  type Registry,
  type RegistryGroup,
} from "./watchdog-registry.ts";

/**
 * The startup sweep: groups that a dead Pi's runtime left (its watchdog killed with it) are stopped
 * (SIGTERM, 1 s, SIGKILL) while provably still its own, by pid + start time (pids are reused: the
 * rules `watchdog.sh` applies, written once more here); its log directory goes after the retention.
 * Only a directory provably ours is touched: mkdtemp's name, our uid, 0700, a registry whose host is gone.
 */

/** After SIGKILL, how long the sweep waits for the kernel to confirm. */
const KILL_CONFIRM_MS = 1_000;
/** Jobs named per dead Pi in the notice (the rest counted), and characters per command. */
const NOTICE_JOBS = 5;
const NOTICE_COMMAND_CHARS = 80;
/** A registry is read only up to this size (the watchdog keeps it far smaller). */
const REGISTRY_MAX_BYTES = 1024 * 1024;

/** A process as identity checks see it. `sid` is unknown where `ps` cannot tell it (macOS). */
export interface ProcessIdentity {
  pid: number;
  pgid: number;
  sid: number | undefined;
  /** Linux: clock ticks since boot (`/proc/<pid>/stat` field 22); elsewhere `ps`'s lstart, spaces made `_`. */
  start: string;
  zombie: boolean;
}

/** Every process with its identity; sessions only where starts are ticks (Linux): `ownedGroups` compares them with a bound. */
function identitySnapshot(): ProcessIdentity[] | undefined {
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

/**
 * The groups to signal for `group` if it is still the one a runtime started: the leader is the same
 * process, or, gone, some member of its session (Linux) started no later than `bound`; without
 * sessions (macOS) any member (a group id is never reused while held). Zombies are not signalled.
 */
function ownedGroups(group: RegisteredGroup, table: readonly ProcessIdentity[]): number[] {
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

const DIR_PATTERN = /^pi-unified-exec-[A-Za-z0-9]{6}$/;
/** Created (exclusively) in a dead runtime's directory by the sweep that stops its groups, so only one does. */
export const SWEPT_MARKER = "swept";

/** Retention in days from the environment: a whole number (0 keeps everything); anything else is the default. */
export function retentionDays(env: NodeJS.ProcessEnv = process.env): number {
  return wholeNumber(env[LOG_RETENTION_ENV], 0) ?? LOG_RETENTION_DAYS;
}

export interface StoppedJob {
  pgid: number;
  command: string;
}

/** One earlier runtime whose groups this sweep stopped. */
export interface SweptRuntime {
  dir: string;
  hostPid: number;
  jobs: StoppedJob[];
}

export interface SweepResult {
  swept: SweptRuntime[];
  /** Process groups still alive after SIGKILL. */
  survivors: number[];
  /** Directories removed by retention; settles after the sweep returns (removal never delays a job). */
  removed: Promise<string[]>;
}

interface DeadRuntime {
  dir: string;
  registry: Registry;
  /** Its watchdog is still at work: leave the directory to it this time. */
  busy: boolean;
}

interface Target {
  runtime: DeadRuntime;
  group: RegistryGroup;
}

const uid = () => process.getuid?.();

/** A living (non-zombie) process is the one `ref` recorded. */
function living(ref: ProcessRef, table: readonly ProcessIdentity[]): boolean {
  const entry = table.find((candidate) => candidate.pid === ref.pid);
  if (!entry || entry.zombie) return false;
  // Without a recorded start time it cannot be told from a later process with that pid: assume the same.
  if (ref.start === "-" || ref.start === "?") return true;
  return entry.start === ref.start;
}

/** The registry of `dir` if the directory is provably a runtime's private log directory of ours. */
async function provenRegistry(dir: string): Promise<Registry | undefined> {
  try {
    const info = await lstat(dir);
    if (!info.isDirectory() || info.uid !== uid() || (info.mode & 0o777) !== 0o700) return undefined;
    const file = join(dir, REGISTRY_FILE);
    const fileInfo = await lstat(file);
    if (!fileInfo.isFile() || fileInfo.uid !== uid() || fileInfo.size > REGISTRY_MAX_BYTES) return undefined;
    return parseRegistry(await readFile(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** Runtimes under `parent` whose Pi process is gone. The process table is read only if a registry was found. */
async function deadRuntimes(parent: string): Promise<{ dead: DeadRuntime[]; table: ProcessIdentity[] }> {
  let names: string[];
  try {
    names = (await readdir(parent)).filter((name) => DIR_PATTERN.test(name));
  } catch {
    return { dead: [], table: [] };
  }
  const proven = await Promise.all(
    names.map(async (name) => ({ dir: join(parent, name), registry: await provenRegistry(join(parent, name)) })),
  );
  const found = proven.filter((entry): entry is { dir: string; registry: Registry } => entry.registry !== undefined);
  const table = found.length > 0 ? identitySnapshot() : undefined;
  if (!table) return { dead: [], table: [] };
  const dead = found
    .filter(({ registry }) => !living(registry.host, table))
    .map(({ dir, registry }) => ({ dir, registry, busy: registry.watchdog !== undefined && living(registry.watchdog, table) }));
  return { dead, table };
}

/** Takes the job of stopping a dead runtime's groups; false when another sweep already took it. */
async function claim(dir: string): Promise<boolean> {
  try {
    const handle = await open(join(dir, SWEPT_MARKER), fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
    await handle.close();
    return true;
  } catch {
    return false;
  }
}

function signal(pgids: readonly number[], sig: NodeJS.Signals): void {
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, sig);
    } catch {
      // Gone already, or not ours to signal: either way nothing more to do here.
    }
  }
}

/** The groups of `targets` still ours and alive, read from a fresh process table. */
function remaining(targets: readonly Target[]): number[] {
  const table = identitySnapshot() ?? [];
  return [...new Set(targets.flatMap((target) => ownedGroups(target.group, table)))];
}

async function waitGone(targets: readonly Target[], timeoutMs: number): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  let left = remaining(targets);
  while (left.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, GROUP_PROBE_INTERVAL_MS));
    left = remaining(targets);
  }
  return left;
}

/** Mtime of a directory's newest file (the sweep's own marker aside), or of the directory when empty. */
async function newestWrite(dir: string): Promise<number> {
  let newest = (await lstat(dir)).mtimeMs;
  let files = 0;
  for (const name of await readdir(dir)) {
    if (name === SWEPT_MARKER) continue;
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (!info) continue;
    newest = files++ === 0 ? info.mtimeMs : Math.max(newest, info.mtimeMs);
  }
  return newest;
}

async function removeExpired(runtimes: readonly DeadRuntime[], days: number, nowMs: number): Promise<string[]> {
  if (days <= 0) return [];
  const removed: string[] = [];
  for (const runtime of runtimes) {
    try {
      if ((await newestWrite(runtime.dir)) > nowMs - days * 86_400_000) continue;
      await rm(runtime.dir, { recursive: true, force: true });
      removed.push(runtime.dir);
    } catch {
      // Retention is housekeeping: a directory that cannot be removed now is tried at the next start.
    }
  }
  return removed;
}

/**
 * Sweeps `parent`: stops the groups dead runtimes left that are still theirs, then (in the
 * background) removes dead runtimes' directories older than `days`. Never throws.
 */
export async function sweepLeftovers(parent: string, days: number = retentionDays(), nowMs: number = Date.now()): Promise<SweepResult> {
  const { dead, table } = await deadRuntimes(parent);
  if (dead.length === 0) return { swept: [], survivors: [], removed: Promise.resolve([]) };
  const targets: Target[] = [];
  const claimed: DeadRuntime[] = [];
  for (const runtime of dead) {
    if (runtime.busy || !(await claim(runtime.dir))) continue;
    claimed.push(runtime);
    for (const group of runtime.registry.groups) if (ownedGroups(group, table).length > 0) targets.push({ runtime, group });
  }
  let survivors: number[] = [];
  let after = table;
  if (targets.length > 0) {
    signal(remaining(targets), "SIGTERM");
    survivors = await waitGone(targets, WATCHDOG_KILL_GRACE_MS);
    if (survivors.length > 0) {
      signal(remaining(targets), "SIGKILL");
      survivors = await waitGone(targets, KILL_CONFIRM_MS);
    }
    after = identitySnapshot() ?? [];
  }
  // A runtime with a group still alive keeps its directory, and is swept again at the next start.
  const unfinished = new Set(dead.filter((runtime) => runtime.registry.groups.some((group) => ownedGroups(group, after).length > 0)));
  await Promise.all(
    claimed.filter((runtime) => unfinished.has(runtime)).map((runtime) => unlink(join(runtime.dir, SWEPT_MARKER)).catch(() => undefined)),
  );
  const swept = claimed
    .map((runtime) => ({
      dir: runtime.dir,
      hostPid: runtime.registry.host.pid,
      jobs: targets.filter((target) => target.runtime === runtime).map(({ group }) => ({ pgid: group.pgid, command: group.command })),
    }))
    .filter((runtime) => runtime.jobs.length > 0);
  const expirable = dead.filter((runtime) => !runtime.busy && !unfinished.has(runtime));
  return { swept, survivors, removed: removeExpired(expirable, days, nowMs) };
}

function shortCommand(command: string): string {
  return command.length > NOTICE_COMMAND_CHARS ? `${command.slice(0, NOTICE_COMMAND_CHARS - 1)}…` : command;
}

/** One line for the first result after a sweep that stopped something (undefined when it stopped nothing). */
export function leftoverNotice(result: Pick<SweepResult, "swept" | "survivors">): string | undefined {
  const parts = result.swept.flatMap(({ dir, hostPid, jobs: groups }) => {
    // An idle warm shell is stopped like a job but is none of the model's business.
    const jobs = groups.filter((job) => job.command !== WARM_SHELL_NAME);
    if (jobs.length === 0) return [];
    const shown = jobs.slice(0, NOTICE_JOBS).map((job) => `\`${shortCommand(job.command)}\` (process group ${job.pgid})`);
    const more = jobs.length > shown.length ? ` and ${jobs.length - shown.length} more` : "";
    const count = jobs.length === 1 ? "1 job" : `${jobs.length} jobs`;
    return `stopped ${count} that an earlier Pi process (pid ${hostPid}) left running when it ended without shutting down: ${shown.join(", ")}${more}; their logs are in ${dir}`;
  });
  if (result.survivors.length > 0) {
    parts.push(
      `process groups ${result.survivors.join(", ")} left by an earlier Pi process survived SIGKILL; stop them by hand (kill -KILL -${result.survivors[0]})`,
    );
  }
  return parts.length > 0 ? parts.join("; ") : undefined;
}
