/* The contract between a job and what runs its process (pipes or a PTY); the contract tests run the same scenarios against each. */
import { constants as osConstants } from "node:os";

/** How the leader process ended. `error` is set when it never started (ENOENT shell or workdir). */
export interface LeaderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/**
 * What a transport reports, in this order: data (any number of times), exit once, closed once. Data
 * may follow the exit (the leader's last bytes, a descendant's output) until `closed`.
 */
export interface TransportEvents {
  /** Output bytes, stdout and stderr merged in arrival order. */
  data(chunk: Buffer): void;
  /** The leader exited (and was reaped) or failed to start. */
  exit(exit: LeaderExit): void;
  /** Every output stream reached its end and our side of it is closed; nothing more will be read. */
  closed(): void;
}

export interface SpawnSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Windows only: pass `args` to the process unquoted (cmd.exe parses its own command line). */
  verbatim?: boolean;
}

/** A PTY's spawn: its size too. */
export interface PtySpawnSpec extends SpawnSpec {
  cols: number;
  rows: number;
}

/** A signal's name from its number (a PTY reports the number). */
export function signalName(signal: number): NodeJS.Signals | null {
  const entry = Object.entries(osConstants.signals).find(([, number]) => number === signal);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

export interface Transport {
  readonly kind: "pipe" | "pty";
  /** Leader pid; undefined when the spawn failed. */
  readonly pid: number | undefined;
  /**
   * What the child's stdin is, as `/proc/<pid>/fd/0` names it (`socket:[123]`, `/dev/pts/4`), taken at
   * spawn, so `input_wait` can tell a read of the job's own stdin from a pipe between its processes.
   */
  readonly stdinIdentity: string | undefined;
  /** Every process group a signal to the job must reach: its session's groups, the leader's first. */
  groups(): number[];
  /** Signals the job's process groups. False when they are already empty. */
  signal(signal: NodeJS.Signals): boolean;
  /**
   * Hands `bytes` to the child's input; resolves once the OS has all of them, rejects with why it
   * cannot. Never blocks the event loop: a child that does not read leaves the promise pending.
   */
  write(bytes: Buffer): Promise<void>;
  /** Ends the child's input: EOF on pipes; on a terminal, Ctrl-D through the line discipline. */
  closeInput(): void;
  /** Changes a terminal's size (the child gets SIGWINCH); absent on pipes. */
  resize?(cols: number, rows: number): void;
  /** Stops reading output (the child blocks once the OS buffer is full) until `resume`. Nothing is lost. */
  pause(): void;
  resume(): void;
  /**
   * Closes our end of every stream now, whoever else still holds them (a daemon that kept the pipe):
   * for shutdown, after the job's processes were stopped. `closed` follows.
   */
  close(): void;
}
