import { accessSync, constants, openSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * What every child starts with. No PTY master of another job (node-pty leaves them inheritable: a
 * child could type into that terminal and keep the job alive after Pi): `spawn` gets /dev/null over
 * each, a PTY child starts through `bash --posix` (dash cannot name fds above 9) that closes them and
 * runs the program (on Linux it stays, as the session's leader: see `HOLDER`). And, on Linux, a raised
 * `oom_score_adj`, so the kernel takes a job before Pi. The set lives on `globalThis` (`/reload`).
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

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A bash of the system (looked up once), for helpers that need one whatever the job's shell; null when none. */
export function systemBash(): string | null {
  return closerShell(state());
}

/**
 * On Linux a PTY job's shell runs as this wrapper's child rather than in its place. When the leader of
 * the terminal's session exits, the kernel hangs up the terminal's foreground group, which holds what
 * the shell started with `&`: ignoring SIGHUP kept most of it alive, but Node resets every signal as
 * it starts, and a hangup in its first milliseconds ended `nohup node … &` (kept in 29 of 30 runs
 * beside two burners; 30 of 30 through this wrapper). The wrapper leads the session with job control
 * (`-m`: the shell gets a group of its own and the terminal), takes the terminal back when the shell
 * ends, and exits as the shell did: the hangup then reaches only the wrapper's own group. Ctrl-C
 * reaches the shell's group alone, as before; the job's own signals spare the wrapper (`holds` below).
 * - `-m` on the command line, not `set -m`: only then does bash keep its own copy of the terminal, and
 *   `2>/dev/null` can silence its job notices ("Killed", "Stopped"), which would land in the output.
 * - A shell killed by a signal is answered by the same signal, raised by a plain `sh` in the wrapper's
 *   place (bash ignores SIGQUIT even when asked), so the job reads as it did. One seam: `exit 130`
 *   reads as a Ctrl-C. The EXIT trap also covers bash's own end when its job dies of SIGINT.
 * - A shell stopped by Ctrl-Z is resumed: nothing else could resume it.
 * - SHLVL is lowered back to what the shell would see after an `exec`.
 */
const HOLDER = [
  `trap 's=$?; case $((s - 128)) in [1-9]|1[0-5]) trap - EXIT HUP; ulimit -c 0; exec /bin/sh -c "kill -$((s - 128)) \\$\\$; exit $s";; esac' EXIT`,
  "exec 9>&2 2>/dev/null",
  "SHLVL=$((SHLVL - 1))",
  '"$0" "$@" 2>&9 9>&-',
  "s=$?",
  'while [ "$s" -gt 128 ] && jobs %% >/dev/null 2>&1; do fg >/dev/null; s=$?; done',
  'exit "$s"',
].join("; ");

/** Node programs' listener that keeps SIGHUP ignored where no wrapper holds the session (node-hangup.cjs says why). */
const NODE_HANGUP = fileURLToPath(new URL("./node-hangup.cjs", import.meta.url));

/** How a PTY child is forked. `holds`: a wrapper leads the session and runs the shell as its child (see `HOLDER`). */
export interface PtyCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  holds: boolean;
}

/**
 * What a PTY child is forked with: a shell that ignores SIGHUP, closes the other masters (Linux), then
 * runs `file` with `args`: as its child on Linux (see `HOLDER`), elsewhere through `exec`, with Node
 * programs told to keep ignoring the hangup (`NODE_OPTIONS`), which narrows the window it has.
 */
export function ptyCommand(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): PtyCommand {
  const shared = state();
  const bash = closerShell(shared);
  const holds = bash !== null && platform === "linux";
  const closes = holds ? [...shared.masters].map((fd) => `exec ${fd}<&-; `).join("") : "";
  const script = `trap '' HUP; ${raiseScript(platform)}${closes}${holds ? HOLDER : 'exec "$0" "$@"'}`;
  if (holds) return { file: bash, args: ["--posix", "-m", "-c", script, file, ...args], env, holds };
  const options = [env.NODE_OPTIONS, `--require ${JSON.stringify(NODE_HANGUP)}`].filter(Boolean).join(" ");
  const withPreload = { ...env, NODE_OPTIONS: options };
  return bash
    ? { file: bash, args: ["--posix", "-c", script, file, ...args], env: withPreload, holds }
    : { file: "/bin/sh", args: ["-c", script, file, ...args], env: withPreload, holds };
}

/**
 * What a pipe job is spawned with on Linux: the PTY's wrapper without the hangup, so its
 * `oom_score_adj` is raised before the program runs. Raised after the spawn instead, a process the
 * shell forked first kept Pi's (4 of 30 beside two burners). Not where bash would change the
 * environment it passes on (`SHELLOPTS`, `BASHOPTS`): there `raiseOomScore` follows the spawn.
 */
export function pipeCommand(file: string, args: readonly string[], env: NodeJS.ProcessEnv, platform = process.platform) {
  const bash = closerShell(state());
  const raise = raiseScript(platform);
  // A program that cannot run is left to the spawn, whose error names it (the wrapper would exit 127).
  const wrap = bash && raise && env.SHELLOPTS === undefined && env.BASHOPTS === undefined && executable(file);
  if (!wrap) return { file, args: [...args], raised: false };
  // `--norc`: on a socket stdin, with no SHLVL, Debian's bash would read ~/.bashrc (as for rsh).
  return { file: bash, args: ["--posix", "--norc", "-c", `${raise}exec "$0" "$@"`, file, ...args], raised: true };
}

function raiseScript(platform: NodeJS.Platform): string {
  const score = platform === "linux" ? jobOomScore() : undefined;
  return score !== undefined ? `{ echo ${score} >/proc/self/oom_score_adj; } 2>/dev/null; ` : "";
}

let oomScore: number | undefined | null = null;

/** The `oom_score_adj` jobs start with: Pi's own plus 500 (at most 1000); Pi's stays as it is. Linux only. */
function jobOomScore(): number | undefined {
  if (oomScore !== null) return oomScore;
  try {
    oomScore = Math.min(1000, Math.max(0, Number(readFileSync("/proc/self/oom_score_adj", "utf8"))) + 500);
  } catch {
    oomScore = undefined;
  }
  return oomScore;
}

/** Raises a child's `oom_score_adj` right after its spawn (a warm shell, idle, forks nothing), and its first children's. */
export function raiseOomScore(pid: number | undefined, platform: NodeJS.Platform = process.platform): boolean {
  const score = platform === "linux" ? jobOomScore() : undefined;
  if (pid === undefined || score === undefined) return false;
  let children: string[] = [];
  try {
    writeFileSync(`/proc/${pid}/oom_score_adj`, String(score));
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean);
  } catch {
    // gone already, or the kernel does not list children
  }
  for (const child of children) {
    try {
      writeFileSync(`/proc/${child}/oom_score_adj`, String(score));
    } catch {
      // gone already
    }
  }
  return true;
}
