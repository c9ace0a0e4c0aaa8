/*
 * input-wait/ — whether a job waits for input, and when that wakes the model.
 * The flow at a glance:
 * 1. A result, a listing or the input wake's probe asks `Job.inputWait`, which asks this file.
 * 2. On Linux the job's processes are scanned (proc-wait.ts: the system call each sleeps in and
 *    the descriptors it waits on): a read or a poll of the job's own stdin is a wait.
 * 3. Where no scan could tell, the prompt rule judges the unfinished last line (`decideInputWait`).
 * 4. On a PTY job that waits, the terminal's echo says whether the prompt hides what is typed
 *    (`secret`); the model's text into such a terminal is refused (`refuseModelSecret`).
 * 5. The input wake's rule (input-wake-rule.ts) says when a job that waits wakes the model.
 *
 * May import: shared, processes.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { descendantsOf, type ProcessEntry, processTable, procStat, sweepTable, tableIndex } from "../processes/process-table.ts";
import { INPUT_WAIT_QUIET_MS, PROMPT_LINE_CHARS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import {
  childrenOf,
  fdTarget,
  kernelListsChildren,
  type ProcReader,
  realProcReader,
  threadCall,
  threadsOf,
  threadWchan,
  waitedFds,
  waitingCalls,
} from "./proc-wait.ts";

/** The scan looks at this many of a job's processes at most: a fork bomb must not make it slow. */
const INPUT_WAIT_MAX_PROCESSES = 1_024;

/**
 * "Is this job blocked reading its own stdin?" (`input_wait`; it only reports). Signals, strongest first:
 * - `syscall` (Linux): a process of the job sleeps in a call that reads the job's own stdin (the pipe
 *   or terminal we hold the other end of, known by the leader's fd 0 at spawn; `/dev/tty` on a PTY),
 *   or polls it while a prompt is drawn and, on a PTY, from the foreground group (a REPL with line
 *   editing; a server that merely watches stdin has ended its last line). A pipe between two of the
 *   job's processes is not its stdin.
 * - `wchan` (Linux, where the syscall file is refused or the architecture unknown): the kernel
 *   function a thread sleeps in reads (or polls, a prompt drawn) and its fd 0 is our stdin.
 * - `prompt` (where no scan could tell): the last line looks like a prompt after
 *   `INPUT_WAIT_QUIET_MS` of quiet, no process on a CPU. A scan that could tell is trusted.
 */
export type InputWaitReason = "syscall" | "wchan" | "prompt";

export interface InputWait {
  likely: boolean;
  reason?: InputWaitReason;
  /** The process found waiting (syscall and wchan signals). */
  pid?: number;
  /** Set by the job when likely: its unfinished last line looks like a prompt (a program may draw one only on a terminal). */
  promptShown?: boolean;
  /** Set by a PTY job when likely: its terminal hides what is typed (a password or passphrase prompt). */
  secret?: true;
}

export interface InputWaitQuery {
  /** The job's leader pid; it leads its own session (sid = pid). */
  pid: number;
  /** The job's stdin identity: the leader's fd 0 link at spawn, or the PTY slave path. Undefined: unknown. */
  stdin: string | undefined;
  tty: boolean;
  /** The unfinished last line of the rendered output: the text after the last `\n` ("" at a line start). */
  lastLine: string;
  /** How long the job has printed nothing, in ms. */
  quietMs: number;
  /**
   * The job's processes that hold its stdin (given here) among their descriptors, where a port scan
   * of this call knows them: only these are looked at for a wait (the others still count as running
   * on a CPU).
   */
  holders?: ((stdin: string, tty: boolean) => ReadonlySet<number> | undefined) | undefined;
  /** A process table already read for this call (the sweep's, when one is under way); without it the job's tree is walked from the leader. */
  table?: ProcessEntry[] | undefined;
}

/** Reads the link of `/proc/<pid>/fd/0` (Linux), or undefined. */
export function readStdinIdentity(pid: number, reader: ProcReader = realProcReader): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return reader.readLink(`/proc/${pid}/fd/0`);
  } catch {
    return undefined;
  }
}

/**
 * The prompt rule. The last {@link PROMPT_LINE_CHARS} characters of the unfinished line, trailing
 * blanks ignored, end in `?`, `:`, `>`, `»`, `›`, `❯`, a shell prompt's `$` or `#` (after a blank,
 * `~`, `]`, `)` or `>`, or after one word such as `bash-5.2`), or a choice such as `[y/N]`, `(yes/no)`, `[Y/n/q]`; or the line ends in `password`,
 * `passphrase` or `PIN`; or it asks to press a key ("Press Enter to continue...").
 */
export function looksLikePrompt(lastLine: string): boolean {
  const line = lastLine.slice(-PROMPT_LINE_CHARS).trimEnd();
  if (!line) return false;
  if (/[?:>»›❯]$/u.test(line)) return true;
  // A shell prompt: `$ `, `# `, `user@host:~$ `, `[root@box ~]# `, `bash-5.2# ` (not a bar of `#`s).
  if (/(?:^|[\s~\])>])[$#]$/.test(line) || /^[\w.-]+[$#]$/.test(line)) return true;
  if (/[[(]\s*[a-z]{1,3}(?:\s*\/\s*[a-z]{1,3}){1,3}\s*[\])]$/i.test(line)) return true;
  if (/(?:password|passphrase|\bpin)$/i.test(line)) return true;
  return /\bpress (?:enter|return|any key)\b/i.test(line);
}

/** What the job's processes are doing, as far as /proc tells. */
export interface Scan {
  waiting?: InputWait;
  /** Some process of the job is running on a CPU. */
  running: boolean;
  /** The scan read what every process that could read the job's stdin waits on: none waiting means none. */
  told: boolean;
}

/** Off Linux, or without the job's stdin identity: nothing was scanned. */
const UNTOLD: Scan = { running: false, told: false };

/** The answer from a scan's verdict and the last line: the prompt rule only where no scan could tell. */
export function decideInputWait(scan: Scan, lastLine: string, quietMs: number): InputWait {
  if (scan.waiting) return scan.waiting;
  if (scan.told || scan.running || quietMs < INPUT_WAIT_QUIET_MS || !looksLikePrompt(lastLine)) return { likely: false };
  return { likely: true, reason: "prompt" };
}

/**
 * The job's processes with their threads: the leader and its descendants (walked through the kernel's
 * children lists, or the given table), plus its session's members from a given table.
 */
function jobProcesses(query: InputWaitQuery, reader: ProcReader): Map<number, number[]> {
  const found = new Map<number, number[]>();
  if (query.table) {
    const index = tableIndex(query.table);
    const pids = new Set([query.pid, ...descendantsOf(query.pid, query.table), ...(index.bySession.get(query.pid) ?? [])]);
    // A process the table read with one thread is its own only thread: no need to list its tasks.
    for (const pid of pids) found.set(pid, index.byPid.get(pid)?.threads === 1 ? [pid] : threadsOf(pid, reader));
    return found;
  }
  if (!kernelListsChildren(reader)) return jobProcesses({ ...query, table: processTable() ?? [] }, reader);
  const queue = [query.pid];
  while (queue.length > 0 && found.size < INPUT_WAIT_MAX_PROCESSES) {
    const pid = queue.shift()!;
    if (found.has(pid)) continue;
    const threads = threadsOf(pid, reader);
    found.set(pid, threads);
    queue.push(...childrenOf(pid, threads, reader));
  }
  return found;
}

const READ_WCHANS = new Set([
  "unix_stream_read_generic",
  "unix_stream_data_wait",
  "pipe_read",
  "anon_pipe_read",
  "pipe_wait",
  "pipe_wait_readable",
  "n_tty_read",
]);
const POLL_WCHANS = /^(?:do_select|core_sys_select|do_sys_poll|poll_schedule_timeout|ep_poll|do_epoll_wait)\b/;

function scanJob(query: InputWaitQuery, reader: ProcReader): Scan {
  const { stdin } = query;
  if (!stdin) return UNTOLD;
  const scan: Scan = { running: false, told: false };
  // Told once some process was seen and no thread that might read our stdin was unreadable.
  let seen = false;
  let unknown = false;
  const calls = waitingCalls();
  const promptDrawn = query.lastLine.trim().length > 0;
  const ours = (target: string | undefined) => target !== undefined && (target === stdin || (query.tty && target === "/dev/tty"));
  const index = query.table && tableIndex(query.table);
  const holders = query.holders?.(stdin, query.tty);
  for (const [pid, threads] of jobProcesses(query, reader)) {
    const stat = statOf(pid, index?.byPid.get(pid));
    if (!stat) continue;
    seen = true;
    const { state } = stat;
    if (state === "R") scan.running = true;
    if (state !== "S" && state !== "D" && state !== "R") continue; // stopped, traced, zombie
    if (holders && !holders.has(pid)) continue; // it holds no descriptor of the job's stdin
    // On a terminal only the foreground group gets the input; tpgid is the terminal's foreground group.
    const foreground = !query.tty || stat.tpgid === stat.pgid;
    for (const tid of threads) {
      const call = calls ? threadCall(pid, tid, reader) : undefined;
      if (call === "running") {
        scan.running = true;
        continue;
      }
      if (call === undefined) {
        const waits = wchanWaits(pid, tid, reader, ours, foreground, promptDrawn);
        if (waits) return { ...scan, waiting: { likely: true, reason: "wchan", pid } };
        unknown ||= waits === undefined;
        continue;
      }
      const kind = calls![call.nr];
      if (!kind || (kind !== "read" && !(promptDrawn && foreground))) continue;
      const fds = waitedFds(pid, kind, call.args, reader);
      if (fds?.some((fd) => ours(fdTarget(pid, fd, reader)))) return { ...scan, waiting: { likely: true, reason: "syscall", pid } };
      unknown ||= fds === undefined;
    }
  }
  return { ...scan, told: seen && !unknown };
}

/** A process's state and groups: from the table this call read, else from its stat file now. */
function statOf(pid: number, entry: ProcessEntry | undefined): { state: string; pgid: number; tpgid: number } | undefined {
  if (entry?.state !== undefined && entry.tpgid !== undefined) return { state: entry.state, pgid: entry.pgid, tpgid: entry.tpgid };
  const stat = procStat(pid);
  return stat && { state: stat[0]!, pgid: Number(stat[2]), tpgid: Number(stat[5]) };
}

/** The fallback without the syscall file: a sleeping thread's kernel function, with fd 0 as the descriptor; undefined: unreadable. */
function wchanWaits(
  pid: number,
  tid: number,
  reader: ProcReader,
  ours: (target: string | undefined) => boolean,
  foreground: boolean,
  promptDrawn: boolean,
): boolean | undefined {
  if (!foreground) return false;
  const wchan = threadWchan(pid, tid, reader);
  if (!wchan) return undefined;
  const reads = READ_WCHANS.has(wchan);
  // `wait_woken` is where a terminal read sleeps on newer kernels, but a socket wait sleeps there too.
  const polls = POLL_WCHANS.test(wchan) || wchan === "wait_woken";
  if (!reads && !(polls && promptDrawn)) return false;
  const target = fdTarget(pid, 0, reader);
  return target === undefined ? undefined : ours(target);
}

/** Whether the job is likely blocked waiting for input on its own stdin, and which signal says so. */
export function probeInputWait(query: InputWaitQuery, reader: ProcReader = realProcReader): InputWait {
  // Inside a listing or a result (a sweep), the process table read for it serves this probe too.
  const table = query.table ?? sweepTable();
  const scan = process.platform === "linux" ? scanJob(table ? { ...query, table } : query, reader) : UNTOLD;
  return decideInputWait(scan, query.lastLine, query.quietMs);
}

/** Linux termios `lflag` bits: the terminal echoes what is typed; it reads whole lines. */
const ECHO = 0o10;
const ICANON = 0o2;

/**
 * Whether a terminal hides what is typed, from its `stty -g` (the fourth field is `lflag`): echo off
 * in canonical mode, as `read -s`, sudo, ssh and getpass set it. A program in raw mode (a REPL, a
 * prompt drawn by Node's readline) echoes by itself, so termios cannot tell its hidden prompts.
 */
export function hidesTyping(sttyG: string): boolean | undefined {
  const lflag = Number.parseInt(sttyG.split(":")[3] ?? "", 16);
  return Number.isNaN(lflag) ? undefined : (lflag & ECHO) === 0 && (lflag & ICANON) !== 0;
}

const runFile = promisify(execFile);

/**
 * Whether the terminal at `path` (a PTY job's `/dev/pts/N`) hides what is typed now: one `stty` run,
 * made only where a prompt waits or the model types into a PTY job, never blocking Pi's loop (a
 * synchronous run took up to 52 ms under load). Linux only: elsewhere (and where it cannot be read)
 * undefined, and nothing is refused.
 */
export async function terminalHidesTyping(path: string | undefined, platform: string = process.platform): Promise<boolean | undefined> {
  if (platform !== "linux" || !path) return undefined;
  try {
    return hidesTyping((await runFile("stty", ["-F", path, "-g"], { encoding: "utf8", timeout: 1_000 })).stdout);
  } catch {
    return undefined;
  }
}

/**
 * A prompt that hides what is typed is the person's: the model's bytes into it are refused before
 * any is written, unless they are control keys alone (Ctrl-C, Ctrl-D, Enter, Backspace). `hidden`
 * reads the terminal now, so a prompt hidden a moment ago is never missed for an older verdict.
 */
export async function refuseModelSecret(jobId: number, bytes: Uint8Array, hidden: () => Promise<boolean | undefined>): Promise<void> {
  if (!bytes.some((byte) => byte >= 0x20 && byte !== 0x7f) || !(await hidden())) return;
  throw new ExecRequestError(
    `session ${jobId} asks for a secret: its terminal hides what is typed, so the answer is the person's. ` +
      `Ask them with write_stdin(session_id: ${jobId}, ask_user: "…"); control keys alone (\\x03, \\x04, \\r) still go. Nothing was written.`,
  );
}
