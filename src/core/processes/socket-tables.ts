import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync } from "node:fs";

/**
 * The machine's listening TCP sockets. Linux: `/proc/net/tcp` and `tcp6` by inode, read a piece at a
 * time and left at the first socket not in LISTEN (the kernel lists listeners first), so 20 000
 * connections cost nothing (Linux 4.4+). macOS: `lsof` by pid, which takes 50–500 ms and blocks Pi's
 * loop: one run at a time, at most once a second and at most a tenth of the time.
 */

/** Bytes read from a table at a time: a few dozen lines, so a read stops close after the listeners. */
const PIECE_BYTES = 16 * 1024;
/** TCP_LISTEN in the tables' `st` column. */
const LISTEN = "0A";

let reads = 0;

/** How many times this process read the socket tables (the benchmark and tests check when scans do). */
export function socketTableReads(): number {
  return reads;
}

/** Listening sockets of this network namespace by inode (`127.0.0.1:8765`), or undefined without /proc/net. */
export function listeningSockets(): Map<string, string> | undefined {
  const sockets = new Map<string, string>();
  let readAny = false;
  reads++;
  for (const [file, v6] of [
    ["/proc/net/tcp", false],
    ["/proc/net/tcp6", true],
  ] as const) {
    if (readListeners(file, v6, sockets)) readAny = true;
  }
  return readAny ? sockets : undefined;
}

/** Adds the listeners of one table to `sockets`; false when the table cannot be read. */
function readListeners(file: string, v6: boolean, sockets: Map<string, string>): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return false;
  }
  try {
    const piece = Buffer.alloc(PIECE_BYTES);
    let rest = "";
    let header = true;
    for (;;) {
      const read = readSync(fd, piece, 0, piece.length, null);
      if (read === 0) return true;
      const lines = (rest + piece.toString("latin1", 0, read)).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        if (header) {
          header = false;
          continue;
        }
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        const fields = line.trim().split(/\s+/);
        if (fields.length < 10) continue;
        if (fields[3] !== LISTEN) return true; // the listeners are behind us
        const address = socketAddress(fields[1]!, v6);
        if (address) sockets.set(fields[9]!, address);
      }
    }
  } catch {
    return true; // the table went away while read: what was read stands
  } finally {
    closeSync(fd);
  }
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

/** macOS: `lsof` runs at most this often for the whole process, and only once its previous run cost at most this share of the time since. */
export const LSOF_MIN_INTERVAL_MS = 1_000;
export const LSOF_COST_SHARE = 0.1;

/** Runs `lsof` once: its `-Fpn` output, or undefined when it is missing or failed. */
export type LsofRunner = () => string | undefined;

const runLsof: LsofRunner = () => {
  const lsof = spawnSync("lsof", ["-nP", "-iTCP", "-sTCP:LISTEN", "-Fpn"], { encoding: "utf8", timeout: 5_000 });
  return lsof.error ? undefined : lsof.stdout;
};

export class LsofProbe {
  /** The latest run's addresses by pid (undefined: it failed), when it ended and what it cost (ms). */
  private last: { byPid: Map<number, string[]> | undefined; ended: number; costMs: number } | undefined;
  private running = false;
  /** How many times `lsof` was started (tests check the cadence). */
  runs = 0;
  /** How many runs have ended: a new one means a new answer. */
  generation = 0;

  constructor(
    private readonly run: LsofRunner = runLsof,
    /** Milliseconds on a monotonic clock: what a run cost is measured on it. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The addresses by pid at `now`: a new run when one is due and none is under way, else the last run's. */
  listening(now: number): ReadonlyMap<number, readonly string[]> | undefined {
    const last = this.last;
    const due = !last || now - last.ended >= Math.max(LSOF_MIN_INTERVAL_MS, last.costMs / LSOF_COST_SHARE);
    if (!due || this.running) return last?.byPid;
    this.running = true;
    const started = this.clock();
    let output: string | undefined;
    try {
      this.runs++;
      output = this.run();
    } finally {
      this.running = false;
    }
    const costMs = Math.max(0, this.clock() - started);
    this.generation++;
    this.last = { byPid: output === undefined ? undefined : parseLsof(output), ended: now + costMs, costMs };
    return this.last.byPid;
  }
}

/** `p<pid>` lines, each followed by its `n<address>` lines; `*:port` is every address. */
function parseLsof(output: string): Map<number, string[]> {
  const byPid = new Map<number, string[]>();
  let pid: number | undefined;
  for (const line of output.split("\n")) {
    if (line.startsWith("p")) pid = Number(line.slice(1));
    else if (line.startsWith("n") && pid !== undefined) {
      const addresses = byPid.get(pid) ?? [];
      addresses.push(line.slice(1).replace(/^\*:/, "0.0.0.0:"));
      byPid.set(pid, addresses);
    }
  }
  return byPid;
}

/** The one probe of this process (every runtime's scans share it). */
export const sharedLsof = new LsofProbe();
