/**
 * The registry file a runtime's watchdog keeps in the runtime's private log directory: who the host
 * was, who the watchdog is, and the process groups the host registered. `watchdog.sh` writes it as a
 * journal (one line per event, rewritten from memory now and then so it stays short); this module
 * reads it back, for the startup sweep of a later Pi process.
 *
 *   pi-unified-exec-registry 1
 *   host <pid> <start>
 *   watchdog <pid> <start>                    (again, appended, by a watchdog started after the first died)
 *   + <pgid> <leader-start> <at> <command>    registered (<at>: watchdog clock, Linux start-time ticks, else "-")
 *   x <pgid> <at>                             its leader exited
 *   - <pgid> <at>                             proven empty, forgotten
 *   q <at> | gone <at> | done <at>            orderly stop | host gone | watchdog finished
 */

export const REGISTRY_FILE = "runtime.registry";
export const REGISTRY_MAGIC = "pi-unified-exec-registry 1";

export interface ProcessRef {
  pid: number;
  /** As the watchdog recorded it; "-" or "?" when it could not be read. */
  start: string;
}

/** What a registry says about one job's group. */
export interface RegisteredGroup {
  pgid: number;
  /** The leader's start time when registered; "-" when it was already gone. */
  leaderStart: string;
  /** Linux: the latest moment (start-time ticks) the group held no process started after its leader's exit. */
  bound: number | undefined;
}

export interface RegistryGroup extends RegisteredGroup {
  command: string;
}

export interface Registry {
  host: ProcessRef;
  watchdog: ProcessRef | undefined;
  /** Groups registered and not forgotten, in registration order. */
  groups: RegistryGroup[];
  /** The host stopped its jobs in order. */
  quit: boolean;
}

function ticks(value: string | undefined): number | undefined {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

function processRef(parts: string[]): ProcessRef | undefined {
  const pid = Number(parts[1]);
  return Number.isSafeInteger(pid) && pid > 0 && parts[2] ? { pid, start: parts[2] } : undefined;
}

/**
 * Reads a registry; undefined when it is not one (wrong first line, no host line). A last line cut
 * short by a crash is ignored. A group whose leader exit was never recorded is bounded by the
 * journal's last entry: the host was alive then, and had not seen that leader exit.
 */
export function parseRegistry(text: string): Registry | undefined {
  const lines = text.split("\n");
  if (lines[0] !== REGISTRY_MAGIC) return undefined;
  if (!text.endsWith("\n")) lines.pop();
  let host: ProcessRef | undefined;
  let watchdog: ProcessRef | undefined;
  let quit = false;
  let last: number | undefined;
  const groups = new Map<number, RegistryGroup & { exitAt?: number }>();
  for (const line of lines.slice(1)) {
    const parts = line.split(" ");
    const [kind] = parts;
    if (kind === "host") host = processRef(parts);
    else if (kind === "watchdog") watchdog = processRef(parts);
    else if (kind === "+") {
      const pgid = Number(parts[1]);
      if (!Number.isSafeInteger(pgid) || pgid <= 1 || !parts[2]) continue;
      const at = ticks(parts[3]);
      // A restarted watchdog records the host's replay of a group it already listed: keep its exit.
      const previous = groups.get(pgid);
      const exitAt = previous?.leaderStart === parts[2] ? previous.exitAt : parts[2] === "-" ? at : undefined;
      groups.delete(pgid);
      groups.set(pgid, {
        pgid,
        leaderStart: parts[2],
        bound: undefined,
        command: parts.slice(4).join(" "),
        ...(exitAt !== undefined ? { exitAt } : {}),
      });
    } else if (kind === "x") {
      const group = groups.get(Number(parts[1]));
      const at = ticks(parts[2]);
      if (group && at !== undefined) group.exitAt = Math.min(group.exitAt ?? at, at);
    } else if (kind === "-") groups.delete(Number(parts[1]));
    else if (kind === "q") quit = true;
    // Only what the host sent proves it alive at that moment ("gone" and "done" come after its death).
    const at = ticks(kind === "+" ? parts[3] : kind === "x" || kind === "-" ? parts[2] : kind === "q" ? parts[1] : undefined);
    if (at !== undefined) last = Math.max(last ?? 0, at);
  }
  if (!host) return undefined;
  return {
    host,
    watchdog,
    quit,
    groups: [...groups.values()].map(({ exitAt, ...group }) => ({ ...group, bound: exitAt ?? last })),
  };
}
