/** The contract between a job and the thing that runs its process (pipes now; a PTY later). */

/** How the leader process ended. `error` is set when it never started (ENOENT shell or workdir). */
export interface LeaderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/** What a transport reports, in this order: data (any number of times), exit once, closed once. */
export interface TransportEvents {
  /** Output bytes, stdout and stderr merged in arrival order. */
  data(chunk: Buffer): void;
  /** The leader exited or failed to start. Output may still follow until `closed`. */
  exit(exit: LeaderExit): void;
  /** Every output stream reached its end. */
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

export interface Transport {
  readonly kind: "pipe" | "pty";
  /** Leader pid; undefined when the spawn failed. */
  readonly pid: number | undefined;
  /** The leader's process group; equals `pid` because the leader starts its own group. */
  readonly pgid: number | undefined;
  /** Every process group a signal to the job must reach. */
  groups(): number[];
  /** Signals the job's process groups. False when they are already empty. */
  signal(signal: NodeJS.Signals): boolean;
  /** Writes to the child's stdin; resolves once handed to the OS, rejects with why it could not be. */
  write(bytes: Buffer): Promise<void>;
  /** Closes the child's stdin: the child reads EOF. */
  closeInput(): void;
  /** Changes a terminal's size (the child gets SIGWINCH); absent on pipes. */
  resize?(cols: number, rows: number): void;
  /** Stops reading output (the child blocks once the pipe is full) until `resume`. */
  pause(): void;
  resume(): void;
}
