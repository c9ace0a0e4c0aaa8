import { accessSync, constants, openSync } from "node:fs";

/**
 * Keeps PTY masters (node-pty's `forkpty` leaves them inheritable) out of every other child, which
 * could type into that terminal and keep the job alive after Pi: `spawn` gets /dev/null over each
 * (extra stdio entries), a PTY child starts through `bash --posix` (no startup file; dash cannot name
 * fds above 9) that closes them and `exec`s the program. The set lives on `globalThis` (`/reload`).
 */

interface FdState {
  masters: Set<number>;
  devNull?: number;
  /** A bash, which can close any descriptor number; null when none was found. */
  closer?: string | null;
}

const KEY = Symbol.for("pi-unified-exec/inheritable-fds");

function state(): FdState {
  const holder = globalThis as { [KEY]?: FdState };
  holder[KEY] ??= { masters: new Set() };
  return holder[KEY];
}

/** A PTY master is open in this process (and would be inherited). */
export function holdMaster(fd: number): void {
  state().masters.add(fd);
}

/** The master was closed. */
export function releaseMaster(fd: number): void {
  state().masters.delete(fd);
}

/** The masters held now, as a key: a child's descriptor layout depends on them (see `spawnStdio`). */
export function heldMastersKey(): string {
  return [...state().masters].sort((a, b) => a - b).join(",");
}

type StdioEntry = "pipe" | "ignore" | number;

/** The `stdio` option for `child_process.spawn`: `base` for fds 0–2, then /dev/null over every open master. */
export function spawnStdio(base: readonly StdioEntry[]): StdioEntry[] {
  const { masters } = state();
  if (masters.size === 0 || process.platform === "win32") return [...base];
  const shared = state();
  // Opened once per process, close-on-exec itself (Node's default), so only its dup2 copies reach children.
  shared.devNull ??= openSync("/dev/null", "r");
  const stdio: StdioEntry[] = [...base];
  for (const fd of masters) {
    if (fd < base.length) continue;
    while (stdio.length < fd) stdio.push("ignore");
    stdio[fd] = shared.devNull;
  }
  return stdio;
}

/** Where a bash lives, looked up once. */
function closerShell(shared: FdState): string | null {
  if (shared.closer !== undefined) return shared.closer;
  shared.closer = null;
  for (const candidate of ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]) {
    try {
      accessSync(candidate, constants.X_OK);
      shared.closer = candidate;
      break;
    } catch {
      // not here
    }
  }
  return shared.closer;
}

/** A bash of the system (looked up once), for helpers that need one whatever the job's shell; null when none. */
export function systemBash(): string | null {
  return closerShell(state());
}

/**
 * What a PTY child is forked with: a shell that ignores SIGHUP, closes the other masters (Linux), then
 * `exec`s `file` with `args`. At the job's shell's exit the kernel hangs up the terminal's foreground
 * group, which holds what it started with `&`: ignored from the start, the hangup ends none of them.
 */
export function ptyCommand(
  file: string,
  args: readonly string[],
  platform: NodeJS.Platform = process.platform,
): { file: string; args: string[] } {
  const shared = state();
  const bash = closerShell(shared);
  const closes = bash && platform === "linux" ? [...shared.masters].map((fd) => `exec ${fd}<&-; `).join("") : "";
  const script = `trap '' HUP; ${closes}exec "$0" "$@"`;
  return bash ? { file: bash, args: ["--posix", "-c", script, file, ...args] } : { file: "/bin/sh", args: ["-c", script, file, ...args] };
}
