import { closeSync, openSync, readSync } from "node:fs";

/**
 * The listening TCP sockets of this network namespace, read from `/proc/net/tcp` and `tcp6` at a
 * cost that does not grow with the machine's connections. The kernel lists a table's listening
 * sockets first (its listening hash), then every other socket (its connection hash); a machine with
 * 20 000 connections makes the whole file megabytes and a read of it hundreds of milliseconds. So
 * the file is read a piece at a time and left at its first line that is not in LISTEN: the kernel
 * formats only what was asked for. (Linux 4.4 and later: before, half-open connections were listed
 * among the listeners, and one of them ends the read early.)
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

/** Listening TCP sockets of this network namespace by inode (their address as `127.0.0.1:8765`), or undefined without /proc/net. */
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
