import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { JOB_MARKER_ENV } from "../shared/constants.ts";
import { type ProcessEntry, processTable, tableIndex } from "./process-table.ts";
import { type LsofProbe, listeningSockets, sharedLsof } from "./socket-tables.ts";

export { socketAddress } from "./socket-tables.ts";

/**
 * The TCP addresses each job listens on, and the one cache of what scans read: per job (its stamp,
 * addresses, processes, sockets), per process (its descriptors), per socket (listening or not).
 * A job is one of its session, its groups, their descendants, or a process carrying its marker
 * (orphans re-parented to a subreaper). Linux reads the jobs' `fd` links and, only for a socket not
 * known yet or due for another look, the listening part of `/proc/net/tcp*`; macOS asks `lsof`.
 * The same walk sums each job's resident memory and CPU time, and remembers what it last listened on
 * (a server gone deaf). A listing of 64 idle jobs beside 20 000 sockets reuses every job: 0.5 ms (≤ 5 ms).
 */

/** A running job as the scan needs it. */
export interface ListenerJob {
  jobId: number;
  /** The leader: the job's session id and first process group. */
  leader: number;
  groups: readonly number[];
  /** Changes whenever the job moves (output, input, its shell's exit); undefined: it always counts as moved. */
  stamp?: string;
}

/** How long a scan trusts what it knew. */
export interface Freshness {
  /** A job whose stamp did not change is answered from its previous read for this long (no /proc read). */
  reuseMs: number;
  /** A socket not listening is looked at again this much after its first look, doubling up to `recheckMaxMs`. */
  recheckMs: number;
  recheckMaxMs: number;
  /** A process whose number of descriptors did not change keeps what was read of them this long, doubling per unchanged read up to 8 s. */
  descriptorsTrustedMs: number;
}

/** A call's scan: every job read again; a server may bind long before it listens, so a closed-looking socket is looked at again 1, 2, 4, then every 8 s. */
export const CALL_SCAN: Freshness = { reuseMs: 0, recheckMs: 1_000, recheckMaxMs: 8_000, descriptorsTrustedMs: 2_000 };
/** A listing's: what a job silently does shows at most a second late, so the picker and several listings of a message share one read. */
export const LISTING_SCAN: Freshness = { ...CALL_SCAN, reuseMs: 1_000 };
/** An `until_listening` wait's: a bind after its `listen` ends the wait about 0.3 s later. */
export const LISTEN_SCAN: Freshness = { reuseMs: 0, recheckMs: 200, recheckMaxMs: 200, descriptorsTrustedMs: 0 };

const DESCRIPTORS_TRUSTED_MAX_MS = 8_000;
/** A job that listened and has listened on nothing this long, its processes running, has gone deaf (SPEC §3c). */
const DEAF_AFTER_MS = 2_000;
/** Longest parent chain followed from a process to a job. */
const MAX_ANCESTRY = 64;

/** What a scan read of one process's descriptors; `stable`: reads in a row that found them unchanged. */
interface Descriptors {
  jobId: number;
  count: number;
  activity: string | undefined;
  inodes: string[];
  streams: string[];
  read: number;
  stable: number;
}

/** A job's resident memory and CPU time, summed over its processes (Linux). */
export interface Usage {
  rssBytes: number;
  cpuMs: number;
}

/** What a job last listened on, and since when it listens on nothing (while its processes run). */
export interface Hearing {
  was: string[];
  closedAt?: number;
}

/** A server gone deaf: what it listened on, when it was first seen closed (the loss's identity), and how long ago. */
export interface Deafness {
  was: string[];
  closedAt: number;
  closedMs: number;
}

/** The hearing after a read that found `addresses` at `now`: a job that never listened has none. */
export function hear(previous: Hearing | undefined, addresses: readonly string[], now: number): Hearing | undefined {
  if (addresses.length > 0) return { was: [...addresses] };
  if (!previous || previous.closedAt !== undefined) return previous;
  return { was: previous.was, closedAt: now };
}

/** Deaf once it has listened on nothing for {@link DEAF_AFTER_MS}. */
export function deafness(hearing: Hearing | undefined, now: number): Deafness | undefined {
  if (hearing?.closedAt === undefined || now - hearing.closedAt < DEAF_AFTER_MS) return undefined;
  return { was: hearing.was, closedAt: hearing.closedAt, closedMs: now - hearing.closedAt };
}

/** What the latest read of a job found. */
interface JobEntry {
  stamp: string | undefined;
  readAt: number;
  addresses: string[];
  usage?: Usage;
  /** Its processes (`pid`, `pid:start`) and the socket inodes they held. */
  members: [number, string][];
  held: string[];
}

/** A socket's listening address, or when it was last seen not listening and how many looks saw that. */
type SocketState = { address: string } | { lookedAt: number; looks: number };

export class ListeningPorts {
  private readonly jobs = new Map<number, JobEntry>();
  private readonly heard = new Map<number, Hearing>();
  private readonly sockets = new Map<string, SocketState>();
  /** Per process (`pid:start`). */
  private readonly descriptors = new Map<string, Descriptors>();
  /** Per process without a job by session or parent: the job its marker names, or none (an environment is fixed at exec). */
  private readonly markers = new Map<string, number | undefined>();
  /** macOS: the latest answer, for the same run of `lsof` and the same jobs. */
  private lastLsof: { key: string; result: Map<number, string[]> } | undefined;

  constructor(
    /** The value every job's marker starts with (`token:`). */
    private readonly markerPrefix: string,
    private readonly platform: NodeJS.Platform = process.platform,
    /** Monotonic milliseconds (tests move it by hand). */
    private readonly now: () => number = () => performance.now(),
    private readonly lsof: LsofProbe = sharedLsof,
  ) {}

  /**
   * The listening addresses of each job (undefined where they cannot be read), one table read for
   * all. `running`: every job still running, so what is known of the others stays known.
   */
  scan(jobs: readonly ListenerJob[], fresh: Freshness = CALL_SCAN, running?: ReadonlySet<number>): Map<number, string[]> | undefined {
    if (jobs.length === 0) return new Map();
    if (this.platform === "darwin") return this.scanLsof(jobs);
    if (this.platform !== "linux") return undefined;
    const now = this.now();
    const result = new Map<number, string[]>();
    const stale = jobs.filter((job) => {
      const known = this.jobs.get(job.jobId);
      const reused = known && job.stamp !== undefined && known.stamp === job.stamp && now - known.readAt < fresh.reuseMs;
      if (reused) result.set(job.jobId, known.addresses);
      return !reused;
    });
    if (stale.length === 0) return result;
    const read = this.scanLinux(stale, fresh, new Set([...(running ?? []), ...jobs.map((job) => job.jobId)]), now);
    if (!read) return undefined;
    for (const [jobId, addresses] of read) result.set(jobId, addresses);
    return result;
  }

  /** When the job's processes were last read (the input wait read beside it is as old). */
  readAt(jobId: number): number | undefined {
    return this.jobs.get(jobId)?.readAt;
  }

  /** The job's memory and CPU time at its latest read (Linux). */
  usage(jobId: number): Usage | undefined {
    return this.jobs.get(jobId)?.usage;
  }

  /** Whether the job has listened since it started: a scan watching for deafness reads only these. */
  listened(jobId: number): boolean {
    return this.heard.has(jobId);
  }

  /** The job as a server gone deaf, at its latest read. */
  deafness(jobId: number): Deafness | undefined {
    return deafness(this.heard.get(jobId), this.now());
  }

  /** Each job's memory and CPU time now, from one read of the process table (Linux; elsewhere undefined). */
  measure(jobs: readonly ListenerJob[]): Map<number, Usage> | undefined {
    const table = this.platform === "linux" ? processTable() : undefined;
    if (!table) return undefined;
    const usage = new Map<number, Usage>(jobs.map((job) => [job.jobId, { rssBytes: 0, cpuMs: 0 }]));
    // Not by marker alone: a process that left with setsid runs on outside the job, and a memory stop
    // could not reach it; only what the stop ends counts against the cap.
    for (const [process, jobId] of jobOwners(jobs, table, () => undefined)) add(usage.get(jobId)!, process);
    return usage;
  }

  /** Remembers what a read of the job found, for {@link deafness}. */
  private noteHeard(jobId: number, addresses: readonly string[], now: number): void {
    const hearing = hear(this.heard.get(jobId), addresses, now);
    if (hearing) this.heard.set(jobId, hearing);
  }

  /** macOS: the sockets `lsof` lists by pid, each given to the job owning the pid. */
  private scanLsof(jobs: readonly ListenerJob[]): Map<number, string[]> | undefined {
    const sockets = this.lsof.listening(this.now());
    if (!sockets) return undefined;
    const key = `${this.lsof.generation}:${jobs.map((job) => `${job.jobId}/${job.groups.join(",")}`).join(" ")}`;
    if (this.lastLsof?.key === key) return new Map(this.lastLsof.result);
    const table = processTable();
    if (!table) return undefined;
    const result = new Map<number, string[]>(jobs.map((job) => [job.jobId, []]));
    for (const [entry, jobId] of jobOwners(jobs, table, () => undefined)) result.get(jobId)!.push(...(sockets.get(entry.pid) ?? []));
    for (const [jobId, addresses] of result) {
      result.set(jobId, ordered(addresses));
      this.noteHeard(jobId, addresses, this.now());
    }
    this.lastLsof = { key, result };
    return new Map(result);
  }

  private scanLinux(jobs: readonly ListenerJob[], fresh: Freshness, running: ReadonlySet<number>, now: number) {
    const table = processTable();
    if (!table) return undefined;
    const entries = new Map<number, JobEntry>();
    const still = new Set<number>();
    for (const job of jobs) {
      if (job.stamp !== undefined && this.jobs.get(job.jobId)?.stamp === job.stamp) still.add(job.jobId);
      entries.set(job.jobId, { stamp: job.stamp, readAt: now, addresses: [], members: [], held: [], usage: { rssBytes: 0, cpuMs: 0 } });
    }
    for (const jobId of this.jobs.keys()) if (!running.has(jobId)) this.jobs.delete(jobId);
    for (const jobId of this.heard.keys()) if (!running.has(jobId)) this.heard.delete(jobId);
    const seen = new Set<string>();
    for (const [process, jobId] of jobOwners(jobs, table, (entry) => this.markerJob(entry))) {
      const id = `${process.pid}:${process.start ?? ""}`;
      seen.add(id);
      const entry = entries.get(jobId)!;
      entry.members.push([process.pid, id]);
      add(entry.usage!, process);
      entry.held.push(...this.socketsOf(process, id, jobId, now, fresh.descriptorsTrustedMs, still.has(jobId)));
    }
    for (const [id, known] of this.descriptors)
      if (!seen.has(id) && (entries.has(known.jobId) || !running.has(known.jobId))) this.descriptors.delete(id);
    for (const [jobId, entry] of entries) this.jobs.set(jobId, entry);
    this.forgetMarkers(table);
    const scanned = new Set([...entries.values()].flatMap((entry) => entry.held));
    if ([...scanned].some((inode) => this.needsLook(inode, now, fresh)) && !this.readSockets(scanned, now)) return undefined;
    const inUse = new Set([...this.jobs.values()].flatMap((entry) => entry.held));
    for (const inode of this.sockets.keys()) if (!inUse.has(inode)) this.sockets.delete(inode);
    const result = new Map<number, string[]>();
    for (const [jobId, entry] of entries) {
      const addresses = entry.held.flatMap((inode) => {
        const state = this.sockets.get(inode);
        return state && "address" in state ? [state.address] : [];
      });
      entry.addresses = ordered(addresses);
      this.noteHeard(jobId, entry.addresses, now);
      result.set(jobId, entry.addresses);
    }
    return result;
  }

  /** A socket never looked at, or not listening and due for another look (one seen listening listens until closed). */
  private needsLook(inode: string, now: number, fresh: Freshness): boolean {
    const state = this.sockets.get(inode);
    if (state === undefined) return true;
    if ("address" in state) return false;
    return now - state.lookedAt >= Math.min(fresh.recheckMs * 2 ** (state.looks - 1), fresh.recheckMaxMs);
  }

  /** Each of `inodes` not known to listen is listening now, or, for now, not. */
  private readSockets(inodes: ReadonlySet<string>, now: number): boolean {
    const listening = listeningSockets();
    if (!listening) return false;
    for (const inode of inodes) {
      const state = this.sockets.get(inode);
      if (state && "address" in state) continue;
      const address = listening.get(inode);
      this.sockets.set(inode, address ? { address } : { lookedAt: now, looks: (state?.looks ?? 0) + 1 });
    }
    return true;
  }

  /**
   * A process's socket inodes: a `readlink` per descriptor, reused while its number of descriptors
   * (the size of `/proc/<pid>/fd`, Linux 6.2+) stays the same and is trusted. A process that did not
   * run (same activity) of a job that did not move (`still`) is not even asked its number: that `stat`
   * was most of a listing of 64 idle jobs.
   */
  private socketsOf(process: ProcessEntry, id: string, jobId: number, now: number, trustedMs: number, still: boolean): string[] {
    const known = this.descriptors.get(id);
    const trust = known ? Math.min(trustedMs * 2 ** known.stable, Math.max(trustedMs, DESCRIPTORS_TRUSTED_MAX_MS)) : 0;
    const trusted = known !== undefined && now - known.read < trust;
    if (trusted && still && process.activity !== undefined && process.activity === known.activity) return known.inodes;
    const count = descriptorCount(process.pid);
    if (trusted && count !== undefined && count === known.count) {
      known.activity = process.activity;
      return known.inodes;
    }
    const { inodes, streams } = descriptorsOf(process.pid);
    const same = known !== undefined && count === known.count && `${inodes} ${streams}` === `${known.inodes} ${known.streams}`;
    if (count !== undefined) {
      const stable = same ? known.stable + 1 : 0;
      this.descriptors.set(id, { jobId, count, activity: process.activity, inodes, streams, read: now, stable });
    }
    return inodes;
  }

  /**
   * The job's processes at its latest read that hold `stdin` (a `socket:[…]`, pipe or terminal link;
   * `/dev/tty` too on a terminal), or may (descriptors not kept): only these can wait to read it.
   */
  stdinHolders(jobId: number, stdin: string, tty: boolean): Set<number> | undefined {
    const members = this.jobs.get(jobId)?.members;
    if (!members) return undefined;
    const inode = stdin.startsWith("socket:[") ? stdin.slice(8, -1) : undefined;
    const holders = new Set<number>();
    for (const [pid, id] of members) {
      const known = this.descriptors.get(id);
      const holds =
        !known ||
        (inode !== undefined ? known.inodes.includes(inode) : known.streams.includes(stdin)) ||
        (tty && known.streams.includes("/dev/tty"));
      if (holds) holders.add(pid);
    }
    return holders;
  }

  /** The job of this runtime whose marker `pid` carries (Linux), else undefined. */
  markedJob(pid: number): number | undefined {
    return this.platform === "linux" ? markedJob(pid, this.markerPrefix) : undefined;
  }

  private markerJob(entry: ProcessEntry): number | undefined {
    const id = `${entry.pid}:${entry.start ?? ""}`;
    if (this.markers.has(id)) return this.markers.get(id);
    const job = markedJob(entry.pid, this.markerPrefix);
    this.markers.set(id, job);
    return job;
  }

  private forgetMarkers(table: readonly ProcessEntry[]): void {
    if (this.markers.size <= table.length) return;
    const living = new Set(table.map((entry) => `${entry.pid}:${entry.start ?? ""}`));
    for (const id of this.markers.keys()) if (!living.has(id)) this.markers.delete(id);
  }
}

/** Which job each living process belongs to: by session or group, else as its parent, else by its own marker. */
export function jobOwners(jobs: readonly ListenerJob[], table: ProcessEntry[], marked: (entry: ProcessEntry) => number | undefined) {
  const bySession = new Map<number, number>();
  for (const job of jobs) {
    bySession.set(job.leader, job.jobId);
    for (const group of job.groups) bySession.set(group, job.jobId);
  }
  const { byPid } = tableIndex(table);
  const memo = new Map<number, number | undefined>();
  const ownerOf = (entry: ProcessEntry, depth: number): number | undefined => {
    if (memo.has(entry.pid)) return memo.get(entry.pid);
    let owner = (entry.sid !== undefined ? bySession.get(entry.sid) : undefined) ?? bySession.get(entry.pgid);
    const parent = entry.ppid > 1 && depth < MAX_ANCESTRY ? byPid.get(entry.ppid) : undefined;
    if (owner === undefined && parent) owner = ownerOf(parent, depth + 1);
    owner ??= entry.zombie || entry.pid === process.pid ? undefined : marked(entry);
    memo.set(entry.pid, owner);
    return owner;
  };
  const owners: [ProcessEntry, number][] = [];
  for (const entry of table) {
    if (entry.zombie || entry.pid === process.pid) continue;
    const owner = ownerOf(entry, 0);
    if (owner !== undefined && jobs.some((job) => job.jobId === owner)) owners.push([entry, owner]);
  }
  return owners;
}

/** The job id in `pid`'s marker when it starts with `prefix`, else undefined. */
function markedJob(pid: number, prefix: string): number | undefined {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return undefined; // gone, or not ours to read
  }
  const needle = `${JOB_MARKER_ENV}=${prefix}`;
  const at = environ.indexOf(needle);
  if (at === -1 || (at > 0 && environ.charCodeAt(at - 1) !== 0)) return undefined;
  const id = Number.parseInt(environ.slice(at + needle.length), 10);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** How many descriptors `pid` has (0 before Linux 6.2: unknown). */
function descriptorCount(pid: number): number | undefined {
  try {
    const size = statSync(`/proc/${pid}/fd`).size;
    return size > 0 ? size : undefined;
  } catch {
    return undefined;
  }
}

/** The socket inodes among `pid`'s descriptors, and its pipes and terminals (what a job's stdin can be). */
function descriptorsOf(pid: number): { inodes: string[]; streams: string[] } {
  const inodes: string[] = [];
  const streams: string[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return { inodes, streams };
  }
  for (const fd of fds) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith("socket:[")) inodes.push(link.slice(8, -1));
      else if (link.startsWith("pipe:[") || link.startsWith("/dev/pts/") || link === "/dev/tty") streams.push(link);
    } catch {
      // closed while we looked
    }
  }
  return { inodes, streams };
}

function add(usage: Usage, process: ProcessEntry): void {
  usage.rssBytes += process.rssBytes ?? 0;
  usage.cpuMs += process.cpuMs ?? 0;
}

/** Addresses once each, by port, then address. */
function ordered(addresses: string[]): string[] {
  const port = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));
  return [...new Set(addresses)].sort((a, b) => port(a) - port(b) || a.localeCompare(b));
}
