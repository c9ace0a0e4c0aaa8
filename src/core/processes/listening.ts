import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { type LsofProbe, sharedLsof } from "./lsof.ts";
import { listeningSockets } from "./socket-tables.ts";

export { socketAddress } from "./socket-tables.ts";

import { DESCRIPTORS_TRUSTED_MAX_MS, JOB_MARKER_ENV } from "../shared/constants.ts";
import { type ProcessEntry, processTable, tableIndex } from "./process-table.ts";

/**
 * The TCP ports a job listens on: sockets in LISTEN held by its processes — its session (its leader
 * is the session and first group), its other groups, descendants that left them (found through
 * their parents, or by the job marker in their environment whatever their parent is: an orphan is
 * re-parented to pid 1 or to a subreaper such as `systemd --user`).
 *
 * Linux reads each of the job's processes' `fd` links for socket inodes (again only when its number
 * of descriptors changed, where the kernel tells it cheaply, and that number is asked only of a
 * process that ran or whose job moved since), then — only when a job holds a socket
 * whose state is not known — the listening part of `/proc/net/tcp` and `tcp6` (socket-tables.ts).
 * A socket once seen listening is known to listen while a process holds it (a socket never stops
 * listening but by being closed); one seen doing anything else (a client or an accepted connection,
 * a Unix socket, a socket not yet listening) is looked at again while held, 1, 2, 4, then every 8 s
 * after its previous look: a server may bind long before it listens (uvicorn `--reload` binds in one
 * process and listens in another). So the tables are read at most once per scan, and only when a
 * job's set of sockets changed or one of its sockets not listening is due for another look.
 * A scan of some jobs (one call's job, a listing's changed jobs) keeps what it knew of the others.
 * macOS asks `lsof` when it is there, at a bounded cadence (lsof.ts). Elsewhere there is no answer
 * (undefined).
 */

/** A running job as the scan needs it. */
export interface ListenerJob {
  jobId: number;
  /** The leader: the job's session id and first process group. */
  leader: number;
  /** The job's process groups (a PTY's foreground group is one of them). */
  groups: readonly number[];
  /**
   * What changes whenever the job moves (its output, its input). Where it is given and did not change
   * since the job's previous scan, a process of the job that did not run either is not asked its number
   * of descriptors again while what was read of them is trusted.
   */
  motion?: string;
}

/** Longest parent chain followed from a process to a job (a deeper one is not a job's). */
const MAX_ANCESTRY = 64;
/**
 * A socket not listening is looked at again this long after its first look, the wait doubling with
 * each look up to {@link RECHECK_MAX_MS}: most servers listen microseconds after their bind, some
 * seconds later; a client or a connection held for hours costs one read of the listeners per 8 s.
 */
const RECHECK_MS = 1_000;
const RECHECK_MAX_MS = 8_000;
/**
 * A process whose number of descriptors did not change is taken to hold the same sockets for this
 * long (one closed and another opened in its place is seen at the next full read).
 */
const DESCRIPTORS_TRUSTED_MS = 2_000;

/**
 * What a scan read of one process's descriptors; `stable`: how many reads in a row found them
 * unchanged; `activity`: the process's activity in the table at that scan.
 */
interface Descriptors {
  jobId: number;
  count: number;
  activity: string | undefined;
  inodes: string[];
  streams: string[];
  read: number;
  stable: number;
}

/** How long a scan trusts what it knew (see {@link ListeningPorts.scan}). */
export interface Freshness {
  /** A socket not listening is looked at again this much after its first look, then doubling up to `recheckMaxMs`. */
  recheckMs: number;
  recheckMaxMs: number;
  descriptorsTrustedMs: number;
}

const USUAL_FRESHNESS: Freshness = { recheckMs: RECHECK_MS, recheckMaxMs: RECHECK_MAX_MS, descriptorsTrustedMs: DESCRIPTORS_TRUSTED_MS };

/** What the scan knows of a socket: its listening address, or when it was last seen not listening and how many looks saw that. */
type SocketState = { address: string } | { lookedAt: number; looks: number };

export class ListeningPorts {
  /** Socket inodes, as far as known. */
  private sockets = new Map<string, SocketState>();
  /** Per process (`pid:start`): its job, its socket inodes, how many descriptors it had then, and when they were read. */
  private descriptors = new Map<string, Descriptors>();
  /** The processes each scanned job had at its latest scan (`pid`, `pid:start`). */
  private members = new Map<number, [number, string][]>();
  /** The socket inodes each job's processes held at its latest scan (what keeps a socket's state known). */
  private held = new Map<number, string[]>();
  /** macOS: the latest answer, for the same run of `lsof` and the same jobs. */
  private lastLsof: { key: string; result: Map<number, string[]> } | undefined;
  /** Each running job's motion at its latest scan. */
  private motions = new Map<number, string | undefined>();
  /** Per process (`pid:start`) without a job by session or parent: the job its marker names, or none. */
  private markers = new Map<string, number | undefined>();

  constructor(
    /** The value every job's marker starts with (`token:`). */
    private readonly markerPrefix: string,
    private readonly platform: NodeJS.Platform = process.platform,
    /** Milliseconds on a monotonic clock (tests move it by hand). */
    private readonly now: () => number = () => performance.now(),
    /** macOS: where `lsof` is asked (one per process, throttled; tests give a mock). */
    private readonly lsof: LsofProbe = sharedLsof,
  ) {}

  /**
   * The listening addresses of each job, or undefined where they cannot be read. One scan for all jobs.
   * `fresh`: a wait for a bind (`until_listening`) trusts what it knew for less long — a "not
   * listening" (a socket seen between its `bind` and its `listen`) and a process's unchanged number
   * of descriptors (one closed and a socket opened in its place).
   */
  scan(jobs: readonly ListenerJob[], fresh: Freshness = USUAL_FRESHNESS, running?: ReadonlySet<number>): Map<number, string[]> | undefined {
    if (jobs.length === 0) return new Map();
    if (this.platform === "linux") return this.scanLinux(jobs, fresh, new Set([...(running ?? []), ...jobs.map((job) => job.jobId)]));
    if (this.platform === "darwin") return this.scanLsof(jobs);
    return undefined;
  }

  /**
   * macOS: the listening sockets by pid from `lsof` (at its cadence), each given to the job that owns
   * the pid (the table is `ps` there, a process of its own: read again only with a new run of `lsof`
   * or other jobs).
   */
  private scanLsof(jobs: readonly ListenerJob[]): Map<number, string[]> | undefined {
    const sockets = this.lsof.listening(this.now());
    if (!sockets) return undefined;
    const key = `${this.lsof.generation}:${jobs.map((job) => `${job.jobId}/${job.groups.join(",")}`).join(" ")}`;
    if (this.lastLsof?.key === key) return new Map(this.lastLsof.result);
    const table = processTable();
    if (!table) return undefined;
    const result = new Map<number, string[]>(jobs.map((job) => [job.jobId, []]));
    for (const [entry, jobId] of jobOwners(jobs, table, () => undefined)) result.get(jobId)!.push(...(sockets.get(entry.pid) ?? []));
    for (const [jobId, addresses] of result) result.set(jobId, ordered(addresses));
    this.lastLsof = { key, result };
    return new Map(result);
  }

  /**
   * `running`: every job still running, scanned or not (the scanned ones among them); what is known
   * of the others' processes and sockets stays, so a scan of one job never makes another's sockets
   * unknown again.
   */
  private scanLinux(jobs: readonly ListenerJob[], fresh: Freshness, running: ReadonlySet<number>): Map<number, string[]> | undefined {
    const table = processTable();
    if (!table) return undefined;
    const held = new Map<number, string[]>(jobs.map((job) => [job.jobId, []]));
    const now = this.now();
    const seen = new Set<string>();
    const still = new Set<number>();
    for (const job of jobs) {
      this.members.set(job.jobId, []);
      if (job.motion !== undefined && this.motions.get(job.jobId) === job.motion) still.add(job.jobId);
      this.motions.set(job.jobId, job.motion);
    }
    for (const jobId of this.members.keys()) if (!running.has(jobId)) this.members.delete(jobId);
    for (const jobId of this.motions.keys()) if (!running.has(jobId)) this.motions.delete(jobId);
    for (const [entry, jobId] of jobOwners(jobs, table, (process) => this.markerJob(process))) {
      const id = `${entry.pid}:${entry.start ?? ""}`;
      seen.add(id);
      this.members.get(jobId)!.push([entry.pid, id]);
      const trustedMs = fresh.descriptorsTrustedMs;
      held.get(jobId)!.push(...this.socketsOf(entry, id, jobId, now, trustedMs, still.has(jobId)));
    }
    for (const [id, known] of this.descriptors)
      if (!seen.has(id) && (held.has(known.jobId) || !running.has(known.jobId))) this.descriptors.delete(id);
    for (const jobId of this.held.keys()) if (!running.has(jobId)) this.held.delete(jobId);
    for (const [jobId, inodes] of held) this.held.set(jobId, inodes);
    this.forgetMarkers(table);
    const scanned = new Set([...held.values()].flat());
    const unknown = [...scanned].some((inode) => this.needsLook(inode, now, fresh));
    if (unknown && !this.readSockets(scanned, now)) return undefined;
    const inUse = new Set([...this.held.values()].flat());
    for (const inode of this.sockets.keys()) if (!inUse.has(inode)) this.sockets.delete(inode);
    const result = new Map<number, string[]>();
    for (const [jobId, inodes] of held) {
      const addresses = inodes.flatMap((inode) => {
        const state = this.sockets.get(inode);
        return state && "address" in state ? [state.address] : [];
      });
      result.set(jobId, ordered(addresses));
    }
    return result;
  }

  /** A socket never looked at, or not listening and due for another look. */
  private needsLook(inode: string, now: number, fresh: Freshness): boolean {
    const state = this.sockets.get(inode);
    if (state === undefined) return true;
    if ("address" in state) return false;
    return now - state.lookedAt >= Math.min(fresh.recheckMs * 2 ** (state.looks - 1), fresh.recheckMaxMs);
  }

  /** Reads the system's listening sockets: each of `inodes` not known is listening there, or, for now, not. */
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
   * A process's socket inodes. Reading them costs a `readlink` per descriptor; where the kernel tells
   * a process's number of descriptors cheaply (the size of `/proc/<pid>/fd`, Linux 6.2 and later),
   * an unchanged number reuses what was read, for {@link DESCRIPTORS_TRUSTED_MS} — doubled for each
   * read in a row that found the same descriptors, up to {@link DESCRIPTORS_TRUSTED_MAX_MS} (an idle
   * shell or a `sleep` is not read every 2 s for as long as it lives). `trustedMs` 0 trusts nothing.
   * Within that trust, a process that did not run since (the same activity in the table) of a job
   * that did not move (`still`) is not even asked its number: that `stat` was most of a listing of
   * 64 idle jobs (some 10 µs for each of their 630 processes).
   */
  private socketsOf(entry: ProcessEntry, id: string, jobId: number, now: number, trustedMs: number, still: boolean): string[] {
    const known = this.descriptors.get(id);
    const trust = known ? Math.min(trustedMs * 2 ** known.stable, Math.max(trustedMs, DESCRIPTORS_TRUSTED_MAX_MS)) : 0;
    const trusted = known !== undefined && now - known.read < trust;
    if (trusted && still && entry.activity !== undefined && entry.activity === known.activity) return known.inodes;
    const count = descriptorCount(entry.pid);
    if (trusted && count !== undefined && count === known.count) {
      known.activity = entry.activity; // the same number as of now: what ran since is looked at
      return known.inodes;
    }
    const { inodes, streams } = descriptorsOf(entry.pid);
    const same = known !== undefined && count === known.count && `${inodes} ${streams}` === `${known.inodes} ${known.streams}`;
    if (count !== undefined) {
      const stable = same ? known.stable + 1 : 0;
      this.descriptors.set(id, { jobId, count, activity: entry.activity, inodes, streams, read: now, stable });
    }
    return inodes;
  }

  /**
   * The processes of `jobId` at its latest scan that hold `stdin` (a `socket:[…]`, `pipe:[…]` or
   * terminal link; `/dev/tty` too on a terminal) among their descriptors, or may: one whose
   * descriptors were not kept counts as holding it. Only these can wait to read the job's input; a
   * process gets the job's stdin only by opening a descriptor, which changes its count.
   */
  stdinHolders(jobId: number, stdin: string, tty: boolean): Set<number> | undefined {
    const members = this.members.get(jobId);
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

  /** The job a process's marker names (read once per process: a process's environment is fixed at exec). */
  private markerJob(entry: ProcessEntry): number | undefined {
    const id = `${entry.pid}:${entry.start ?? ""}`;
    if (this.markers.has(id)) return this.markers.get(id);
    const job = markedJob(entry.pid, this.markerPrefix);
    this.markers.set(id, job);
    return job;
  }

  /** Forgets the markers of processes that are gone (the table is the whole machine's). */
  private forgetMarkers(table: readonly ProcessEntry[]): void {
    if (this.markers.size <= table.length) return;
    const living = new Set(table.map((entry) => `${entry.pid}:${entry.start ?? ""}`));
    for (const id of this.markers.keys()) if (!living.has(id)) this.markers.delete(id);
  }
}

/** Which job each living process belongs to: by session, by group, by its parents, or by its marker. */
export function jobOwners(jobs: readonly ListenerJob[], table: ProcessEntry[], marked: (entry: ProcessEntry) => number | undefined) {
  const bySession = new Map<number, number>();
  for (const job of jobs) {
    bySession.set(job.leader, job.jobId);
    for (const group of job.groups) bySession.set(group, job.jobId);
  }
  const { byPid } = tableIndex(table);
  const memo = new Map<number, number | undefined>();
  // By session or group; else as its parent (up to MAX_ANCESTRY); else by its own marker, whatever
  // its parent is (pid 1, a subreaper): it inherited the marker from the job that started it.
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

/** The job id in `pid`'s marker when it starts with `prefix` (`token:`), else undefined. */
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

/** How many descriptors `pid` has, where the kernel says so in the size of `/proc/<pid>/fd` (0 before Linux 6.2: unknown). */
function descriptorCount(pid: number): number | undefined {
  try {
    const size = statSync(`/proc/${pid}/fd`).size;
    return size > 0 ? size : undefined;
  } catch {
    return undefined;
  }
}

/** The socket inodes among `pid`'s open descriptors, and its other pipes and terminals (what a job's stdin can be). */
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

/** Addresses once each, by port, then address. */
function ordered(addresses: string[]): string[] {
  const port = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));
  return [...new Set(addresses)].sort((a, b) => port(a) - port(b) || a.localeCompare(b));
}
