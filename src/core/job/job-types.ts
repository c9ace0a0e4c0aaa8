import type { LogDirectory } from "../log/job-log.ts";
import type { ShownPart } from "../output/shown-part.ts";
import type { JobInput } from "../request/input.ts";
import type { ScreenView } from "../screen/job-screen.ts";
import type { TerminalSize } from "../screen/terminal-size.ts";
import type { TransportFactory } from "../transport/spawn.ts";
import type { UntilSpec } from "../wait/call-wait.ts";
import type { ListenReader } from "../wait/listen-watch.ts";
import type { OutputDelta } from "./job-output.ts";
import type { InputOutcome } from "./job-stdin.ts";
import type { WaitEnd, WaitEnds } from "./wait.ts";

/**
 * The words a job and its callers share: what starts a job, who stopped it, its exit, and one call's
 * turn with it (what to do, what it did). The job itself is `job.ts`.
 */

/**
 * Who stopped a job, when something did (rather than the job ending by itself): `killed` the model
 * (`kill_session`), `user` the human (the sessions picker), `timeout` its `timeout_s` deadline,
 * `log_quota` its log quota (with PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop), `boundary` a session boundary
 * or a runtime given up after `/reload`.
 */
export type StopReason = "killed" | "user" | "timeout" | "log_quota" | "boundary";

/** Final state of a job, fixed once the exit is known and the output drained. */
export interface JobExit {
  /** The leader's exit code; for a death by signal, 128 + the signal number, as a shell reports it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the job never ran, or failed in a way the exit code cannot say. */
  failure?: string;
  /** Set when the runtime stopped the job, and why. */
  stoppedBy?: StopReason;
}

/** One call's turn with a job: what to change first, how long to stay, and what else may end it. */
export interface StepPlan extends WaitEnds {
  resize?: TerminalSize;
  input?: JobInput;
  deadlineMono: number;
  /** A conditional wait: return once a line matches, the job goes quiet or it listens. */
  until?: UntilSpec;
  /** Reads the job's listening addresses, for `until_listening`. */
  readListening?: ListenReader;
  /** `screen` as the call gave it: true the screen, false the stream, absent the screen on the alternate screen. */
  screen?: boolean;
  /** What the result can show of the output: a large read is decoded only that far. */
  shown?: ShownPart;
}

/** What a turn did: how its wait ended, what its input came to, and the output since the previous read. */
export interface StepResult {
  end: WaitEnd;
  input?: InputOutcome;
  /** Absent for a cancelled call: it reads nothing. */
  output?: OutputDelta;
  /** The line `until_pattern` matched (bounded), when that ended the wait. */
  matchedLine?: string;
  /** The addresses read by the check `until_listening` ended on, when it did: the result shows them. */
  listening?: string[];
  /** The screen the result shows instead of the stream (PTY jobs; see {@link JobScreen.view}). */
  screen?: ScreenView;
}

/** What a call wrote, as text, for the terminal's echo of it. */
export function writtenText(input: JobInput): string {
  if (input.kind === "bytes") return input.bytes.toString("utf8");
  return input.kind === "interrupt" ? "\x03" : "\x04";
}

/** What a job is started with. */
export interface JobSpec {
  id: number;
  /** The command as the model wrote it (for reports; the transport runs the shell). */
  command: string;
  cwd: string;
  logs: LogDirectory;
  /** Starts the process (pipes or a PTY); the job is the only caller. */
  transport: TransportFactory;
  /** The executable the transport starts (the shell), for the message when it cannot start. */
  program: string;
  /** The PTY's size at spawn; pipes when absent. */
  terminal?: { cols: number; rows: number };
  /** Hard deadline: the job is stopped this long after spawn, whether or not anyone waits on it. */
  timeoutMs: number;
  /**
   * When the job's process may have begun running, where that is before the job is made (a warm
   * shell runs its job from its answer on, before the answer is read); now when absent.
   */
  startedMono?: number;
}
