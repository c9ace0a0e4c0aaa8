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
 * beside two burners; 100 of 100 through this wrapper). The wrapper leads the session with job control
 * (`-m`: the shell gets a group of its own and the terminal), takes the terminal back when the shell
 * ends, and exits with the shell's code: the hangup then reaches only the wrapper's own group, and
 * nothing in the job needs SIGHUP ignored. Ctrl-C reaches the shell's group alone, as before; the
 * job's own signals spare the wrapper (pty-unix.ts).
 * - `-m` on the command line, not `set -m`: only then does bash keep its own copy of the terminal, and
 *   `2>/dev/null` can silence its job notices ("Stopped"), which would land in the output.
 * - bash gives the code of a shell killed by a signal as 128 + its number, as `exit 137` would: the
 *   wrapper exits with the code, and the transport reads it as the signal it sent, if it sent one.
 *   A death by SIGINT is told apart: bash then ends the wrapper before `r` is cleared, and the EXIT
 *   trap raises SIGINT in its place. SIGTERM and SIGHUP to the wrapper itself (a shutdown, the
 *   watchdog, the terminal hung up) are caught: it waits for the shell, and a code of 128 + that
 *   signal is then raised as the signal too.
 * - A terminal stop (Ctrl-Z, 148–150) is undone at once: nothing else could resume the shell. A
 *   SIGSTOP from outside holds until someone continues it: the wait runs no command (one would clear
 *   the job's status from bash's table), ignores a Ctrl-C meant for the stopped job, and ends in `fg`,
 *   which gives the job the terminal again.
 * - SHLVL is lowered back to what the shell would see after an `exec`.
 */
const HOLDER = [
  `trap 's=$?; n=; [ -n "$r" ] && n=2 s=130; [ -n "$g" ] && [ "$s" = $((g + 128)) ] && n=$g; [ -n "$n" ] || exit $s; trap - EXIT; exec /bin/sh -c "kill -$n \\$\\$; exit $s"' EXIT`,
  "trap g=15 TERM",
  "trap g=1 HUP",
  "exec 9>&2 2>/dev/null",
  "SHLVL=$((SHLVL - 1))",
  "r=1",
  '"$0" "$@" 2>&9 9>&-',
  "s=$? r=",
  "while jobs %% >/dev/null 2>&1; do case $s in 148|149|150) ;; *) " +
    [
      "trap '' INT",
      "p=$(jobs -p %%)",
      // A FIFO nobody writes, read with a timeout: the wait's clock (without mkfifo, `sleep`).
      `[ -n "$h" ] || { h=1; q=\${TMPDIR:-/tmp}/.pi-unified-exec-hold.$$; mkfifo -m 600 "$q" && exec 8<>"$q" && h=8; rm -f "$q"; }`,
      `while { read -r t < "/proc/$p/stat"; } 2>/dev/null && set -- \${t##*) } && [ "$1" = T ]; do if [ "$h" = 8 ]; then read -t 1 -u 8 _; else sleep 1; fi; done`,
      "trap - INT",
      `{ read -r t < "/proc/$p/stat"; } 2>/dev/null && set -- \${t##*) } && [ "$1" != Z ] || { wait %%; s=$?; continue; }`,
    ].join("; ") +
    ";; esac; r=1; fg >/dev/null; s=$? r=; done",
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
 * What a PTY child is forked with: a bash that closes the other masters (Linux) and runs `file` with
 * `args` as its child (Linux, see `HOLDER`); elsewhere a shell that ignores SIGHUP, which the job's
 * processes inherit, and `exec`s it, with Node programs told to keep ignoring the hangup
 * (`NODE_OPTIONS`), which narrows the window Node's reset leaves.
 */
export function ptyCommand(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): PtyCommand {
  const shared = state();
  const bash = closerShell(shared);
  const closes = bash && platform === "linux" ? [...shared.masters].map((fd) => `exec ${fd}<&-; `).join("") : "";
  // Not where bash would pass its own options on (`SHELLOPTS`, `BASHOPTS`): the shell would get `-m` too.
  if (bash && platform === "linux" && env.SHELLOPTS === undefined && env.BASHOPTS === undefined) {
    const script = `${raiseScript(platform)}${closes}${HOLDER}`;
    return { file: bash, args: ["--posix", "-m", "-c", script, file, ...args], env, holds: true };
  }
  const script = `trap '' HUP; ${raiseScript(platform)}${closes}exec "$0" "$@"`;
  const options = [env.NODE_OPTIONS, `--require ${JSON.stringify(NODE_HANGUP)}`].filter(Boolean).join(" ");
  const withPreload = { ...env, NODE_OPTIONS: options };
  return bash
    ? { file: bash, args: ["--posix", "-c", script, file, ...args], env: withPreload, holds: false }
    : { file: "/bin/sh", args: ["-c", script, file, ...args], env: withPreload, holds: false };
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
