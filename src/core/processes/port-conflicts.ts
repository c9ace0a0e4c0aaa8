import { readdirSync, readlinkSync } from "node:fs";
import { commandLineOf, processTable } from "./process-table.ts";
import { listeningSockets, sharedLsof } from "./socket-tables.ts";

/**
 * Ports a job cannot get or gives back (SPEC §3c): the bind failures its output may say, who holds a
 * port (a process's `fd` links on Linux, `lsof` on macOS), and the wait after a kill until its ports
 * are free. Looked up only when a failure line is printed or a job that listened is killed.
 */

/**
 * The bind failures we recognise, case-insensitive: Node's `EADDRINUSE`, `address already in use`
 * (Python, Go, Rust, uvicorn, Java), and `port N is (already) in use` (vite, next, Django).
 */
const BIND_FAILURE = /EADDRINUSE|address already in use|\bport (?:\d{1,5} )?(?:is (?:already )?|already )in use/i;

/** Where a failure line names its port: `port 3000`, a Python address tuple `('::', 8000)`, else its last `:3000`. */
const PORT_IN_LINE = [/\bport:? (\d{1,5})\b/i, /,\s*(\d{1,5})\)/, /:(\d{1,5})(?!.*:\d)/];

/** A port a job's output says it could not get. `line`: the failure line, for the port's guess from the command. */
export interface BindFailure {
  port?: number;
  line: string;
}

const validPort = (port: number) => Number.isInteger(port) && port >= 1 && port <= 65_535;

/** The bind failures among `text`'s lines (at most a few: a crash loop repeats the same one). */
export function bindFailures(text: string, max = 4): BindFailure[] {
  if (!BIND_FAILURE.test(text)) return [];
  const found: BindFailure[] = [];
  for (const line of text.split("\n")) {
    if (!BIND_FAILURE.test(line)) continue;
    const port = PORT_IN_LINE.map((pattern) => Number(pattern.exec(line)?.[1])).find(validPort);
    if (found.some((known) => known.port === port)) continue;
    found.push({ ...(port !== undefined ? { port } : {}), line });
    if (found.length >= max) break;
  }
  return found;
}

/** The ports a failure names, or, for one that names none (Python's), the port-like numbers of the job's command. */
export function failedPorts(failures: readonly BindFailure[], command: string): number[] {
  const named = failures.flatMap((failure) => (failure.port !== undefined ? [failure.port] : []));
  if (named.length > 0 || failures.length === 0) return [...new Set(named)];
  const numbers = [...command.matchAll(/(?:^|[\s:=])(\d{2,5})(?=$|[\s/])/g)].map((match) => Number(match[1]));
  return [...new Set(numbers.filter((port) => validPort(port) && port >= 80))];
}

/** The listening ports of the machine now (Linux's tables, macOS's `lsof`); undefined where they cannot be read. */
export function listenedPorts(platform: NodeJS.Platform = process.platform): Set<number> | undefined {
  const addresses = platform === "linux" ? listeningSockets()?.values() : sharedLsof.listening(performance.now())?.values();
  if (!addresses) return undefined;
  return new Set([...addresses].flat().map((address) => Number(address.slice(address.lastIndexOf(":") + 1))));
}

/** Who holds a listening socket on `port`: its pid and command line, or undefined when nobody does (or we cannot see). */
export function portHolder(port: number, platform: NodeJS.Platform = process.platform): { pid: number; command?: string } | undefined {
  const pid = platform === "linux" ? linuxHolder(port) : platform === "darwin" ? lsofHolder(port) : undefined;
  if (pid === undefined) return undefined;
  const command = commandLineOf(pid);
  return { pid, ...(command ? { command } : {}) };
}

const portOf = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));

function lsofHolder(port: number): number | undefined {
  for (const [pid, addresses] of sharedLsof.listening(performance.now()) ?? []) if (addresses.some((a) => portOf(a) === port)) return pid;
  return undefined;
}

/** The first process whose descriptors hold a listening socket on `port`: every process's `fd` links, read until found. */
function linuxHolder(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const [inode, address] of listeningSockets() ?? []) if (portOf(address) === port) inodes.add(`socket:[${inode}]`);
  if (inodes.size === 0) return undefined;
  for (const entry of processTable() ?? []) {
    if (entry.zombie) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry.pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${entry.pid}/fd/${fd}`))) return entry.pid;
      } catch {
        // closed while we looked
      }
    }
  }
  return undefined;
}

/** After a kill of a job that listened on `addresses`: the ports free within 2 s, and those still held, by whom. */
export async function portsAfterKill(addresses: readonly string[]) {
  const ports = [...new Set(addresses.map(portOf))];
  const held = await portsStillHeld(ports, 2_000);
  if (!held) return {};
  return {
    ...(held.length < ports.length ? { portsReleased: ports.filter((port) => !held.includes(port)) } : {}),
    ...(held.length > 0 ? { portsStillHeld: held.map((port) => ({ port, ...portHolder(port) })) } : {}),
  };
}

/** Waits (every `intervalMs`, at most `timeoutMs`) until no process listens on `ports`; the ones still listened on. */
export async function portsStillHeld(
  ports: readonly number[],
  timeoutMs: number,
  listened: () => ReadonlySet<number> | undefined = listenedPorts,
  intervalMs = 50,
): Promise<number[] | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const now = listened();
    if (!now) return undefined;
    const held = ports.filter((port) => now.has(port));
    if (held.length === 0 || performance.now() >= deadline) return held;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
