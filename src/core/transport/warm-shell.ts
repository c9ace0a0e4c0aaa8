/*
 * One bash started ahead of time, so a pipe job does not pay for Node's `spawn` (a fork of Pi, 3–5 ms)
 * on its call's path. It leads its own session, its stdio already the job's pipes, waits on a control
 * socket for the job, enters the workdir and `exec`s the program: the job is a direct spawn's twin.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants as fsConstants } from "node:fs";
import type { Socket } from "node:net";
import { heldMastersKey, raiseOomScore, spawnStdio, systemBash } from "../processes/fd-hygiene.ts";
import { signalGroup } from "../processes/process-group.ts";
import { JOB_MARKER_ENV, WARM_SHELL_NAME } from "../shared/constants.ts";
import { closeDetached, type DetachedPipe, detachPipe } from "./output-reader.ts";
import type { AdoptedChild } from "./pipe.ts";
import type { SpawnSpec } from "./types.ts";

/**
 * The hand-off protocol: lists, each framed as ten decimal digits (the frame's length in bytes), a
 * header line `<count> <length of each value>…`, then the values back to back (no value holds a NUL;
 * the locale is C, so lengths are bytes). Pi sends the environment; the shell answers `r` (or `o`:
 * bash before 4.4, and it reads on until stopped); Pi sends the job (workdir, program, the per-job
 * variables as index and `KEY=value`, the arguments); the shell answers `x` and `exec`s it, or `c` (no
 * such workdir) and exits. Two `read -N` per list: bash reads a `-d` record one byte per system call
 * on a socket. `-u`, never `<&`: the job's fd 0 must stay its stdin pipe. `--norc`: Debian's bash reads
 * `~/.bashrc` when its stdin is a socket.
 *
 * Exactly once: only the answer decides. `x` is written before the `exec` and the socket closes at
 * the `exec`, so at its end every answer has been read: with `x` the job runs in that process, without
 * it nothing ran and the job spawns directly. Where bash cannot carry the environment exactly
 * (`BASH_FUNC_f%%`, `SHELLOPTS`), the shell `exec`s `env -i <environment> <program>` (2.4 ms more).
 */
const BOOTSTRAP = `h=$1
((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404)) || { printf o >&"$h"; while read -r -d '' -u "$h" _; do :; done; exit 1; }
l() {
  local t s d o v
  a=()
  IFS= read -r -N 10 -u "$h" t && [[ $t =~ ^[0-9]{10}$ ]] || return 1
  IFS= read -r -N "$((10#$t))" -u "$h" s && [ "\${#s}" = "$((10#$t))" ] || return 1
  d=\${s%%$'\\n'*}
  [[ $d =~ ^[0-9]+( [0-9]+)*$ ]] || return 1
  o=$((\${#d} + 1))
  set -f
  set -- $d
  [ "$(($# - 1))" = "$1" ] || return 1
  shift
  for v; do a+=("\${s:o:v}"); o=$((o + v)); done
  [ "$o" = "\${#s}" ]
}
l && e=("\${a[@]}") || exit 1
printf r >&"$h" || exit 1
l && j=("\${a[@]}") || exit 1
k=3
while [ "$k" -lt $((3 + 2 * j[2])) ]; do e[j[k]]=\${j[k + 1]}; k=$((k + 2)); done
cd -P -- "\${j[0]}" 2>/dev/null || { printf c >&"$h"; exit 1; }
printf x >&"$h" || exit 1
if [ "$3" = 1 ] && unset -v PWD OLDPWD SHLVL LC_ALL && export -- "\${e[@]}" 2>/dev/null; then
  [[ -v SHLVL ]] && SHLVL=$((SHLVL + 1))
  exec {h}>&- "\${j[1]}" "\${j[@]:k}"
fi
exec {h}>&- "$2" -i -- "\${e[@]}" "\${j[1]}" "\${j[@]:k}"`;

export { WARM_SHELL_NAME };

/** Variables whose values differ per job; the rest of the environment must match the shell's. */
const PER_JOB_KEYS = [JOB_MARKER_ENV];

const ENV_PROGRAM = "/usr/bin/env";
let envProgramFound: boolean | undefined;

function envProgram(): string | undefined {
  if (envProgramFound === undefined) {
    try {
      accessSync(ENV_PROGRAM, fsConstants.X_OK);
      envProgramFound = true;
    } catch {
      envProgramFound = false;
    }
  }
  return envProgramFound ? ENV_PROGRAM : undefined;
}

/** The environment as Node's `spawn` hands it to execve: own keys in order (NODE_V8_COVERAGE propagates, as Node does). */
function envEntries(env: NodeJS.ProcessEnv): string[] | undefined {
  const entries: string[] = [];
  const source =
    process.env.NODE_V8_COVERAGE && !Object.hasOwn(env, "NODE_V8_COVERAGE")
      ? { ...env, NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }
      : env;
  for (const key in source) {
    const value = source[key];
    if (value === undefined) continue;
    const entry = `${key}=${value}`;
    // Node refuses these at spawn; the direct spawn reports it.
    if (key === "" || entry.includes("\0")) return undefined;
    entries.push(entry);
  }
  return entries;
}

/** What a warm shell is started for, and what a job must match to use it. */
export interface WarmTarget {
  fingerprint: string;
  /** The bash that runs the bootstrap. */
  interpreter: string;
  entries: string[];
  /** Indexes of the per-job variables in `entries`. */
  perJob: number[];
}

/**
 * Names bash will not export as given (read-only, computed, arrays, its own) and the bootstrap's own
 * variables. `PWD`, `OLDPWD`, `SHLVL` and `LC_ALL` the bootstrap unsets and exports; `_` bash drops.
 */
const BASH_KEEPS = new Set(
  (
    "BASHOPTS SHELLOPTS BASH_VERSINFO EUID UID PPID BASHPID BASH_ARGV0 BASH_ARGC BASH_ARGV BASH_COMMAND " +
    "BASH_EXECUTION_STRING BASH_LINENO BASH_SOURCE BASH_SUBSHELL BASH_ALIASES BASH_CMDS BASH_REMATCH BASH_LOADABLES_PATH " +
    "DIRSTACK EPOCHREALTIME EPOCHSECONDS FUNCNAME GROUPS HISTCMD LINENO PIPESTATUS RANDOM SRANDOM SECONDS " +
    "COMP_CWORD COMP_KEY COMP_LINE COMP_POINT COMP_TYPE COMP_WORDBREAKS COMP_WORDS COPROC MAPFILE READLINE_LINE " +
    "READLINE_POINT READLINE_MARK REPLY h e j a k t s d o v"
  ).split(" "),
);

/** The bootstrap raises `SHLVL` before its `exec` (bash lowers it): only a plain small number survives unchanged. */
const SHLVL_CARRIED = /^(0|[1-9][0-9]{0,2})$/;

/** Whether bash can export every entry itself, name and value exactly as given (asked as a shell starts, off every call's path). */
export function bashCarries(entries: readonly string[]): boolean {
  return entries.every((entry) => {
    const name = entry.slice(0, entry.indexOf("="));
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || BASH_KEEPS.has(name)) return false;
    return name !== "SHLVL" || SHLVL_CARRIED.test(entry.slice(6));
  });
}

/** The target a pipe job of `shell` would need, or undefined when no warm shell can start it. */
export function warmTarget(spec: SpawnSpec, shell: string): WarmTarget | undefined {
  if (process.platform === "win32" || spec.verbatim || (shell !== "bash" && shell !== "sh")) return undefined;
  // `env` would take a program path holding `=` for a variable; a relative one it would look up itself.
  if (!spec.file.startsWith("/") || spec.file.includes("=")) return undefined;
  const interpreter = shell === "bash" ? spec.file : systemBash();
  const entries = envEntries(spec.env);
  if (!interpreter || !envProgram() || !entries) return undefined;
  const perJob = PER_JOB_KEYS.map((key) => entries.findIndex((entry) => entry.startsWith(`${key}=`))).filter((index) => index >= 0);
  // The per-job values are left out: any value matches; the shell is handed the job's.
  const shared = entries.map((entry, index) => (perJob.includes(index) ? entry.slice(0, entry.indexOf("=") + 1) : entry));
  return { fingerprint: [spec.file, interpreter, heldMastersKey(), ...shared].join("\0"), interpreter, entries, perJob };
}

/** A list as the bootstrap reads it (see the protocol above): its frame's length, a header of lengths, the values. */
function list(values: readonly (string | number)[]): Buffer {
  const parts = values.map((value) => Buffer.from(String(value)));
  const frame = Buffer.concat([Buffer.from(`${[parts.length, ...parts.map((part) => part.length)].join(" ")}\n`), ...parts]);
  return Buffer.concat([Buffer.from(String(frame.length).padStart(10, "0")), frame]);
}

/** The job for a shell started for `target`. */
export function handoff(spec: SpawnSpec, target: WarmTarget): Buffer {
  const overrides = target.perJob.flatMap((index) => [index, target.entries[index]!]);
  return list([spec.cwd, spec.file, target.perJob.length, ...overrides, ...spec.args]);
}

/** The first stdio slot from 3 that carries nothing (spawnStdio puts /dev/null over PTY masters). */
function controlSlot(stdio: unknown[]): number {
  let slot = 3;
  while (stdio[slot] !== undefined && stdio[slot] !== "ignore") slot++;
  return slot;
}

/** How a hand-off ended: the shell runs the job, or it was discarded (`workdir`: it could not enter it). */
export type HandResult = AdoptedChild | { failed: "workdir" | "shell" };

/** No warm shell can work in this process (Node's internals differ from what the shell needs). */
export class WarmShellUnsupported extends Error {}

export class WarmShell {
  state: "starting" | "ready" | "handing" | "taken" | "gone" = "starting";
  readonly child: ChildProcess;
  readonly fingerprint: string;
  private readonly control: Socket;
  private reply = "";
  /** The shell's bash is too old for the bootstrap (it said `o`): no shell of this bash will do. */
  unsupported = false;
  /** Its stdout and stderr, held unread until the job is adopted. */
  private readonly outputs: [DetachedPipe, DetachedPipe];
  /** Called when the shell's answer to a hand-off may have arrived (or it ended). */
  private onAnswer: (() => void) | undefined;

  /** Starts the shell (throws when the spawn does); `gone` is called once if it ends before it is taken. */
  constructor(
    target: WarmTarget,
    private readonly gone: (shell: WarmShell) => void,
  ) {
    this.fingerprint = target.fingerprint;
    const stdio: unknown[] = spawnStdio(["pipe", "pipe", "pipe"]);
    const slot = controlSlot(stdio);
    stdio[slot] = "pipe";
    const carries = bashCarries(target.entries) ? "1" : "0";
    const args = ["--norc", "--noprofile", "-c", BOOTSTRAP, WARM_SHELL_NAME, String(slot), ENV_PROGRAM, carries];
    this.child = spawn(target.interpreter, args, {
      cwd: "/",
      env: { LC_ALL: "C" },
      detached: true,
      stdio: stdio as ("pipe" | "ignore" | number)[],
    });
    // A failed spawn reports 'error' in a later tick; unhandled, it would crash Pi.
    this.child.on("error", () => this.lose());
    // Idle, it forks nothing: the job it `exec`s keeps the raised score.
    raiseOomScore(this.child.pid);
    const control = this.child.stdio[slot] as Socket | null;
    if (this.child.pid === undefined || !control) {
      this.discard();
      throw new Error("the warm shell could not be started");
    }
    this.control = control;
    // Not read until the job is adopted: Node would read them now and, were the job to end before
    // that, throw away what nobody had read (it resumes a child's unread stdio at its exit).
    const outputs = [this.child.stdout, this.child.stderr].map((stream) => (stream ? detachPipe(stream) : undefined));
    if (!outputs[0] || !outputs[1]) {
      for (const output of outputs) if (output) closeDetached(output);
      this.discard();
      throw new WarmShellUnsupported("Node's pipe internals differ: a warm shell's output could not be held unread");
    }
    this.outputs = outputs as [DetachedPipe, DetachedPipe];
    // An idle shell keeps nothing alive: neither the process nor its pipes hold Pi's event loop.
    this.child.unref();
    for (const stream of this.child.stdio) {
      const socket = stream as Socket | null;
      socket?.on("error", () => this.lose());
      socket?.unref?.();
    }
    // Neither for a hand-off (see above) nor for an idle shell is the exit what counts: the control
    // socket's end is, which comes after every answer (an old bash's `o` included).
    control.on("close", () => {
      this.lose();
      this.onAnswer?.();
    });
    control.setEncoding("latin1");
    control.on("data", (text: string) => {
      this.reply += text;
      if (this.state === "starting" && this.reply.startsWith("r")) this.state = "ready";
      if (this.state === "starting" && this.reply.startsWith("o")) {
        this.unsupported = true;
        this.discard();
      }
      this.onAnswer?.();
    });
    control.write(list(target.entries));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Idle, ready or still starting: a job may be handed to it (one still starting reads it after its environment). */
  get takesJobs(): boolean {
    return this.state === "ready" || this.state === "starting";
  }

  /** Whether the process has been reaped (its pid may then name another process). */
  private get ended(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /**
   * Hands the job over: resolves with the child once the shell answered `x`, or with why not once it
   * ended without running it (then discarded). Never rejects. SIGCONT every `continueEveryMs` while
   * no answer came; a shell still starting reads the job after its environment.
   */
  hand(job: Buffer, continueEveryMs: number): Promise<HandResult> {
    if (!this.takesJobs || this.ended || this.control.destroyed) {
      this.discard();
      return Promise.resolve({ failed: "shell" });
    }
    // A shell still starting answers `r` (or an old bash `o`) before its answer to the job.
    this.reply = this.state === "starting" ? this.reply : "";
    this.state = "handing";
    return new Promise((resolve) => {
      const finish = (result: HandResult) => {
        clearInterval(timer);
        this.onAnswer = undefined;
        if ("failed" in result) {
          this.state = "ready"; // not taken: discard it like an idle one
          this.discard();
        }
        resolve(result);
      };
      // The job may run from its write on: its window starts here, not at its adoption.
      const handedMono = performance.now();
      const timer = setInterval(() => this.signal("SIGCONT"), continueEveryMs);
      this.onAnswer = () => {
        if (this.reply.includes("x")) {
          this.state = "taken";
          return finish({ child: this.child, outputs: this.outputs, handedMono });
        }
        if (this.reply.includes("c")) return finish({ failed: "workdir" });
        if (this.reply.startsWith("o")) {
          this.unsupported = true;
          return finish({ failed: "shell" });
        }
        // Every answer is read before the end of the control socket: ended without one, it ran nothing.
        if (this.control.destroyed || this.control.readableEnded) finish({ failed: "shell" });
      };
      this.signal("SIGCONT");
      this.control.write(job);
    });
  }

  /** Signals the shell's group while the shell is not reaped (after that its pid may be someone else's). */
  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.ended) return;
    try {
      signalGroup(pid, signal);
    } catch {
      // Already gone.
    }
  }

  /** Stops a shell that holds no job (its group holds only itself) and lets go of its pipes. */
  discard(): void {
    if (this.state === "taken") return;
    this.signal("SIGKILL");
    this.lose();
  }

  private lose(): void {
    if (this.state === "taken" || this.state === "gone") return;
    if (this.state === "handing") {
      // The hand-off settles it (its answer handler runs next and discards).
      return;
    }
    this.state = "gone";
    for (const stream of this.child.stdio) (stream as Socket | null)?.destroy();
    for (const output of this.outputs ?? []) closeDetached(output);
    this.gone(this);
  }
}

export { BOOTSTRAP as WARM_SHELL_BOOTSTRAP };
