/**
 * What a Linux process is blocked on, from /proc: the system call each thread sleeps in, the
 * descriptors it waits on (its fd argument, a poll/select list read from the process's memory, an
 * epoll instance's fdinfo) and what each is. Best-effort and read-only; every access goes through a
 * `ProcReader`, so a test can refuse one as a hardened kernel would.
 */
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { endianness } from "node:os";

/** A poll()/select() descriptor list longer than this is not read: the probe must stay cheap. */
const INPUT_WAIT_MAX_POLL_FDS = 256;

/** How a blocked call names the descriptors it waits on. */
export type CallKind = "read" | "select" | "poll" | "epoll";

/**
 * System calls that wait for input, by number. x86_64 has its own numbering; arm64, riscv64 and
 * loongarch64 share the generic one (which has no plain poll, select or epoll_wait).
 */
const X86_64: Record<number, CallKind> = {
  0: "read",
  17: "read",
  19: "read",
  295: "read",
  327: "read", // read, pread64, readv, preadv, preadv2
  23: "select",
  270: "select", // select, pselect6
  7: "poll",
  271: "poll", // poll, ppoll
  232: "epoll",
  281: "epoll",
  441: "epoll", // epoll_wait, epoll_pwait, epoll_pwait2
};
const GENERIC: Record<number, CallKind> = {
  63: "read",
  65: "read",
  67: "read",
  69: "read",
  286: "read", // read, readv, pread64, preadv, preadv2
  72: "select", // pselect6
  73: "poll", // ppoll
  22: "epoll",
  441: "epoll", // epoll_pwait, epoll_pwait2
};

/** The waiting calls of `arch` (Node's `process.arch`), or undefined where we do not know its numbers. */
export function waitingCalls(arch: string = process.arch): Record<number, CallKind> | undefined {
  if (arch === "x64") return X86_64;
  if (arch === "arm64" || arch === "riscv64" || arch === "loong64") return GENERIC;
  return undefined;
}

/** File access for the probe; tests substitute one that refuses what a hardened kernel refuses. */
export interface ProcReader {
  readFile(path: string): string;
  readLink(path: string): string;
  readDir(path: string): string[];
  /** `length` bytes of process `pid`'s memory at `address`. */
  readMemory(pid: number, address: bigint, length: number): Buffer;
}

export const realProcReader: ProcReader = {
  readFile: (path) => readFileSync(path, "utf8"),
  readLink: (path) => readlinkSync(path),
  readDir: (path) => readdirSync(path),
  readMemory(pid, address, length) {
    const fd = openSync(`/proc/${pid}/mem`, "r");
    try {
      const buffer = Buffer.alloc(length);
      const read = readSync(fd, buffer, 0, length, address);
      return buffer.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  },
};

/** A thread's system call: "running", or the call's number and six arguments; undefined when unreadable. */
export type ThreadCall = "running" | { nr: number; args: bigint[] };

/** Parses `/proc/<pid>/syscall`: `running`, `-1 sp pc` (not in a call) or `nr a0 … a5 sp pc`. */
export function parseSyscall(text: string): ThreadCall | undefined {
  const fields = text.trim().split(" ");
  if (fields[0] === "running") return "running";
  const nr = Number(fields[0]);
  if (!Number.isInteger(nr) || nr < 0 || fields.length < 7) return undefined;
  try {
    return { nr, args: fields.slice(1, 7).map((field) => BigInt(field)) };
  } catch {
    return undefined;
  }
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/** The threads of `pid` (just `pid` when its task list cannot be read). */
export function threadsOf(pid: number, reader: ProcReader): number[] {
  const tasks = attempt(() => reader.readDir(`/proc/${pid}/task`));
  return tasks ? tasks.map(Number).filter(Number.isInteger) : [pid];
}

let childrenListed: boolean | undefined;

/** Whether this kernel lists each thread's children (`CONFIG_PROC_CHILDREN`, on in common distributions). */
export function kernelListsChildren(reader: ProcReader): boolean {
  if (reader !== realProcReader) return attempt(() => reader.readFile(`/proc/self/task/${process.pid}/children`)) !== undefined;
  childrenListed ??= attempt(() => reader.readFile(`/proc/self/task/${process.pid}/children`)) !== undefined;
  return childrenListed;
}

/** Children of `pid` (of all its threads); a process that ends while we look has none. */
export function childrenOf(pid: number, threads: number[], reader: ProcReader): number[] {
  const found: number[] = [];
  for (const tid of threads) {
    const text = attempt(() => reader.readFile(`/proc/${pid}/task/${tid}/children`));
    for (const child of text?.split(" ") ?? []) if (child.trim()) found.push(Number(child));
  }
  return found;
}

export function threadCall(pid: number, tid: number, reader: ProcReader): ThreadCall | undefined {
  const text = attempt(() => reader.readFile(`/proc/${pid}/task/${tid}/syscall`));
  return text === undefined ? undefined : parseSyscall(text);
}

/** The kernel function a thread sleeps in (`wchan`), or undefined when hidden or unreadable. */
export function threadWchan(pid: number, tid: number, reader: ProcReader): string | undefined {
  const text = attempt(() => reader.readFile(`/proc/${pid}/task/${tid}/wchan`))?.trim();
  return text && text !== "0" ? text : undefined;
}

/** What descriptor `fd` of `pid` is: a path, `socket:[inode]`, `pipe:[inode]`, … */
export function fdTarget(pid: number, fd: number, reader: ProcReader): string | undefined {
  return attempt(() => reader.readLink(`/proc/${pid}/fd/${fd}`));
}

/** The memory layouts read below (fd_set bits, struct pollfd) are parsed as little-endian only. */
const LITTLE_ENDIAN = endianness() === "LE";
const POLLIN = 0x1;
const POLLRDNORM = 0x40;
const EPOLLIN = 0x1;

/** Descriptors a select/pselect6 waits to read: bit n of the `readfds` set (`nfds` bits) at `address`. */
export function selectReadFds(pid: number, nfds: number, address: bigint, reader: ProcReader): number[] | undefined {
  if (address === 0n || nfds < 1) return [];
  if (nfds === 1) return [0]; // a set of one bit can only hold descriptor 0: nothing to read
  if (nfds > INPUT_WAIT_MAX_POLL_FDS || !LITTLE_ENDIAN) return undefined;
  const bytes = attempt(() => reader.readMemory(pid, address, Math.ceil(nfds / 8)));
  if (!bytes) return undefined;
  const fds: number[] = [];
  for (let fd = 0; fd < nfds && fd >> 3 < bytes.length; fd++) if (bytes[fd >> 3]! & (1 << (fd & 7))) fds.push(fd);
  return fds;
}

/** Descriptors a poll/ppoll waits to read: `struct pollfd { int fd; short events; short revents; }[nfds]`. */
export function pollReadFds(pid: number, address: bigint, nfds: number, reader: ProcReader): number[] | undefined {
  if (nfds < 1) return [];
  if (nfds > INPUT_WAIT_MAX_POLL_FDS || address === 0n || !LITTLE_ENDIAN) return undefined;
  const bytes = attempt(() => reader.readMemory(pid, address, nfds * 8));
  if (!bytes) return undefined;
  const fds: number[] = [];
  for (let at = 0; at + 8 <= bytes.length; at += 8) {
    const fd = bytes.readInt32LE(at);
    if (fd >= 0 && bytes.readInt16LE(at + 4) & (POLLIN | POLLRDNORM)) fds.push(fd);
  }
  return fds;
}

/** Descriptors registered for input in epoll instance `epfd` of `pid` (its fdinfo lists `tfd: n events: hex`). */
export function epollReadFds(pid: number, epfd: number, reader: ProcReader): number[] | undefined {
  const info = attempt(() => reader.readFile(`/proc/${pid}/fdinfo/${epfd}`));
  if (info === undefined) return undefined;
  const fds: number[] = [];
  for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gim)) {
    if (Number.parseInt(match[2]!, 16) & EPOLLIN) fds.push(Number(match[1]));
  }
  return fds;
}

/** The descriptors a blocked call of `kind` waits to read, or undefined when they cannot be known. */
export function waitedFds(pid: number, kind: CallKind, args: bigint[], reader: ProcReader): number[] | undefined {
  const small = (value: bigint | undefined) => (value !== undefined && value <= 0x7fffffffn ? Number(value) : -1);
  switch (kind) {
    case "read":
      return [small(args[0])];
    case "select":
      return selectReadFds(pid, small(args[0]), args[1] ?? 0n, reader);
    case "poll":
      return pollReadFds(pid, args[0] ?? 0n, small(args[1]), reader);
    case "epoll":
      return epollReadFds(pid, small(args[0]), reader);
  }
}
