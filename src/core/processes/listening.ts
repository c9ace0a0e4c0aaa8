import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { JOB_MARKER_ENV } from "../shared/constants.ts";
import { type ProcessEntry, processTable } from "./process-table.ts";

/**
 * The TCP ports a job listens on: sockets in LISTEN held by its processes — its session (its leader
 * is the session and first group), its other groups, descendants that left them (found through
 * their parents, or by the job marker in their environment once their parent is gone).
 *
 * Linux reads each of the job's processes' `fd` links for socket inodes (again only when its number
 * of descriptors changed, where the kernel tells it cheaply), then — only when some
 * socket's state is not known — `/proc/net/tcp` and `tcp6` for which are listening. Those tables are
 * slow to read on a machine with much memory (the kernel walks its whole connection hash, some
 * milliseconds even when nearly empty), so a socket once seen listening is known to listen while a
 * process holds it (a socket never stops listening but by being closed), and one seen doing anything
 * else is looked at again after {@link RECHECK_MS} (it may be a server's socket before its `listen`).
 * macOS asks `lsof` when it is there. Elsewhere there is no answer (undefined).
 */

/** A running job as the scan needs it. */
export interface ListenerJob {
  jobId: number;
  /** The leader: the job's session id and first process group. */
  leader: number;
  /** The job's process groups (a PTY's foreground group is one of them). */
  groups: readonly number[];
}

/** Longest parent chain followed from a process to a job (a deeper one is not a job's). */
const MAX_ANCESTRY = 64;
/** A socket not seen listening is looked at again after this long. */
const RECHECK_MS = 1_000;
/**
 * A process whose number of descriptors did not change is taken to hold the same sockets for this
 * long (one closed and another opened in its place is seen at the next full read).
 */
const DESCRIPTORS_TRUSTED_MS = 2_000;

/** How long a scan trusts what it knew (see {@link ListeningPorts.scan}). */
export interface Freshness {
  recheckMs: number;
  descriptorsTrustedMs: number;
}

const USUAL_FRESHNESS: Freshness = { recheckMs: RECHECK_MS, descriptorsTrustedMs: DESCRIPTORS_TRUSTED_MS };

/** What the scan knows of a socket: its listening address, or that it was not listening when `seen`. */
type SocketState = { address: string } | { seen: number };

export class ListeningPorts {
  /** Socket inodes, as far as known. */
  private sockets = new Map<string, SocketState>();
  /** Per process (`pid:start`): its socket inodes, how many descriptors it had then, and when they were read. */
  private descriptors = new Map<string, { count: number; inodes: string[]; read: number }>();
  /** Per process (`pid:start`) without a job by session or parent: the job its marker names, or none. */
  private markers = new Map<string, number | undefined>();

  constructor(
    /** The value every job's marker starts with (`token:`). */
    private readonly markerPrefix: string,
    private readonly platform: NodeJS.Platform = process.platform,
  ) {}

  /**
   * The listening addresses of each job, or undefined where they cannot be read. One scan for all jobs.
   * `fresh`: a wait for a bind (`until_listening`) trusts what it knew for less long — a "not
   * listening" (a socket seen between its `bind` and its `listen`) and a process's unchanged number
   * of descriptors (one closed and a socket opened in its place).
   */
  scan(jobs: readonly ListenerJob[], fresh?: Freshness): Map<number, string[]> | undefined {
    if (jobs.length === 0) return new Map();
    if (this.platform === "linux") return this.scanLinux(jobs, fresh ?? USUAL_FRESHNESS);
    if (this.platform === "darwin") return scanLsof(jobs);
    return undefined;
  }

  private scanLinux(jobs: readonly ListenerJob[], fresh: Freshness): Map<number, string[]> | undefined {
    const table = processTable();
    if (!table) return undefined;
    const held = new Map<number, string[]>(jobs.map((job) => [job.jobId, []]));
    const now = performance.now();
    const seen = new Set<string>();
    for (const [entry, jobId] of jobOwners(jobs, table, (process) => this.markerJob(process))) {
      const id = `${entry.pid}:${entry.start ?? ""}`;
      seen.add(id);
      held.get(jobId)!.push(...this.socketsOf(entry.pid, id, now, fresh.descriptorsTrustedMs));
    }
    for (const id of this.descriptors.keys()) if (!seen.has(id)) this.descriptors.delete(id);
    const unknown = [...held.values()].flat().some((inode) => {
      const state = this.sockets.get(inode);
      return state === undefined || ("seen" in state && now - state.seen > fresh.recheckMs);
    });
    const inUse = new Set([...held.values()].flat());
    if (unknown && !this.readSockets(inUse, now)) return undefined;
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

  /** Reads the system's listening sockets: each of `inodes` is listening there, or, for now, not. */
  private readSockets(inodes: ReadonlySet<string>, now: number): boolean {
    const listening = listeningSockets();
    if (!listening) return false;
    for (const inode of inodes) {
      const address = listening.get(inode);
      this.sockets.set(inode, address ? { address } : { seen: now });
    }
    return true;
  }

  /**
   * A process's socket inodes. Reading them costs a `readlink` per descriptor; where the kernel tells
   * a process's number of descriptors cheaply (the size of `/proc/<pid>/fd`, Linux 6.2 and later),
   * an unchanged number reuses what was read, for at most {@link DESCRIPTORS_TRUSTED_MS}.
   */
  private socketsOf(pid: number, id: string, now: number, trustedMs: number): string[] {
    const count = descriptorCount(pid);
    const known = this.descriptors.get(id);
    if (known && count !== undefined && count === known.count && now - known.read < trustedMs) return known.inodes;
    const inodes = socketInodes(pid);
    if (count !== undefined) this.descriptors.set(id, { count, inodes, read: now });
    return inodes;
  }

  /** The job a process's marker names (read once per process: a process's environment is fixed at exec). */
  private markerJob(entry: ProcessEntry): number | undefined {
    const id = `${entry.pid}:${entry.start ?? ""}`;
    if (this.markers.has(id)) return this.markers.get(id);
    const job = markedJob(entry.pid, this.markerPrefix);
    if (this.markers.size > 4096) this.markers.clear();
    this.markers.set(id, job);
    return job;
  }
}

/** Which job each living process belongs to: by session, by group, by its parents, or by its marker. */
function jobOwners(jobs: readonly ListenerJob[], table: ProcessEntry[], marked: (entry: ProcessEntry) => number | undefined) {
  const bySession = new Map<number, number>();
  for (const job of jobs) {
    bySession.set(job.leader, job.jobId);
    for (const group of job.groups) bySession.set(group, job.jobId);
  }
  const byPid = new Map(table.map((entry) => [entry.pid, entry]));
  const memo = new Map<number, number | undefined>();
  const ownerOf = (entry: ProcessEntry): number | undefined => {
    const chain: number[] = [];
    let current: ProcessEntry | undefined = entry;
    let owner: number | undefined;
    while (current && chain.length < MAX_ANCESTRY) {
      if (memo.has(current.pid)) {
        owner = memo.get(current.pid);
        break;
      }
      chain.push(current.pid);
      owner = (current.sid !== undefined ? bySession.get(current.sid) : undefined) ?? bySession.get(current.pgid);
      if (owner !== undefined || current.ppid <= 1) break;
      current = byPid.get(current.ppid);
    }
    for (const pid of chain) memo.set(pid, owner);
    return owner;
  };
  const owners: [ProcessEntry, number][] = [];
  for (const entry of table) {
    if (entry.zombie || entry.pid === process.pid) continue;
    const owner = ownerOf(entry) ?? (entry.ppid <= 1 ? marked(entry) : undefined);
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

/** The socket inodes among `pid`'s open descriptors. */
/** How many descriptors `pid` has, where the kernel says so in the size of `/proc/<pid>/fd` (0 before Linux 6.2: unknown). */
function descriptorCount(pid: number): number | undefined {
  try {
    const size = statSync(`/proc/${pid}/fd`).size;
    return size > 0 ? size : undefined;
  } catch {
    return undefined;
  }
}

function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith("socket:[")) inodes.push(link.slice(8, -1));
    } catch {
      // closed while we looked
    }
  }
  return inodes;
}

/** Listening TCP sockets of this network namespace by inode (their address as `127.0.0.1:8765`), or undefined without /proc/net. */
export function listeningSockets(): Map<string, string> | undefined {
  const sockets = new Map<string, string>();
  let readAny = false;
  for (const [file, v6] of [
    ["/proc/net/tcp", false],
    ["/proc/net/tcp6", true],
  ] as const) {
    let text: string;
    try {
      text = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    readAny = true;
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (fields.length < 10 || fields[3] !== "0A") continue;
      const address = socketAddress(fields[1]!, v6);
      if (address) sockets.set(fields[9]!, address);
    }
  }
  return readAny ? sockets : undefined;
}

/** `0100007F:223D` → `127.0.0.1:8765`; a tcp6 address → `[::1]:8765`. */
export function socketAddress(field: string, v6: boolean): string | undefined {
  const [hex, portHex] = field.split(":");
  if (!hex || !portHex) return undefined;
  const port = Number.parseInt(portHex, 16);
  if (!v6) {
    if (hex.length !== 8) return undefined;
    const bytes = [6, 4, 2, 0].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
    return `${bytes.join(".")}:${port}`;
  }
  if (hex.length !== 32) return undefined;
  // Four 32-bit words, each in the host's (little-endian) byte order.
  const bytes: number[] = [];
  for (let word = 0; word < 4; word++)
    for (const at of [6, 4, 2, 0]) bytes.push(Number.parseInt(hex.slice(word * 8 + at, word * 8 + at + 2), 16));
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `[${compressIpv6(groups)}]:${port}`;
}

/** Eight hex groups as an IPv6 address, the longest run of two or more zero groups written `::`. */
function compressIpv6(groups: string[]): string {
  let best = { at: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j;
  }
  if (best.length < 2) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.length).join(":")}`;
}

/** Addresses once each, by port, then address. */
function ordered(addresses: string[]): string[] {
  const port = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));
  return [...new Set(addresses)].sort((a, b) => port(a) - port(b) || a.localeCompare(b));
}

/** macOS: `lsof` lists the listening sockets with their pids; the process table says whose they are. */
function scanLsof(jobs: readonly ListenerJob[]): Map<number, string[]> | undefined {
  const lsof = spawnSync("lsof", ["-nP", "-iTCP", "-sTCP:LISTEN", "-Fpn"], { encoding: "utf8", timeout: 5_000 });
  if (lsof.error || lsof.stdout === undefined) return undefined;
  const table = processTable();
  if (!table) return undefined;
  const owners = new Map(jobOwners(jobs, table, () => undefined).map(([entry, jobId]) => [entry.pid, jobId]));
  const result = new Map<number, string[]>(jobs.map((job) => [job.jobId, []]));
  let owner: number | undefined;
  for (const line of lsof.stdout.split("\n")) {
    if (line.startsWith("p")) owner = owners.get(Number(line.slice(1)));
    else if (line.startsWith("n") && owner !== undefined) result.get(owner)!.push(line.slice(1).replace(/^\*:/, "0.0.0.0:"));
  }
  for (const [jobId, addresses] of result) result.set(jobId, ordered(addresses));
  return result;
}
