import type { InputWait } from "../input-wait/input-wait.ts";
import type { Deafness, Usage } from "../processes/listening.ts";
import type { Window } from "../request/wait-policy.ts";
import type { ScreenView } from "../screen/job-screen.ts";
import type { TerminalSize } from "../screen/terminal-size.ts";
import type { Job, JobExit, WaitEnd } from "./job.ts";
import type { Background, ShellExit } from "./job-ending.ts";
import type { DisarmedWake, PersonNews, SuspendedPattern, UserInput } from "./job-holders.ts";
import type { OutputDelta, UnreadTally } from "./job-output.ts";
import type { InputOutcome } from "./job-stdin.ts";
import type { Termination } from "./job-stop.ts";

/**
 * One view of a job at one moment, and the reports built on it. Every result, listing, wake, live
 * progress and UI row reads a {@link JobSnapshot}, so a field means the same everywhere; a report adds
 * only what its call did.
 */
export interface JobSnapshot {
  jobId: number;
  /** As the model wrote it. */
  command: string;
  cwd: string;
  tty: boolean;
  terminal?: { cols: number; rows: number };
  /** Once the exit is final (a cancelled call's report leaves it out: it read nothing). */
  exit?: JobExit;
  /** From spawn to now, or to the exit once there is one. */
  elapsedMs: number;
  /** Since the last output byte (since spawn when there was none). */
  quietMs: number;
  /** Including bytes retention dropped. */
  outputBytesTotal: number;
  /** Reads of the output so far: at most 1 in the job's first result (0 when that call was cancelled). */
  outputReads: number;
  logPath: string;
  logPartialReason?: string;
  /** Until the hard deadline, while the job runs. */
  deadlineRemainingMs?: number;
  wakeArmed: boolean;
  /** The exit wake rides with the next turn instead of starting one (`on_exit: "next_turn"`). */
  wakeLevel?: "next_turn";
  /** The job's armed `wake_on_pattern`, as the model wrote it (a `next_turn:` prefix included). */
  wakePattern?: string;
  /** TCP addresses the running job listens on (`127.0.0.1:8765`), where they can be read. */
  listening?: string[];
  /** A server gone deaf: it listened, and has listened on nothing for a while, its processes running. */
  deaf?: Deafness;
  /** Resident memory and CPU time summed over the running job's processes (Linux). */
  usage?: Usage;
  attached: boolean;
  /** The user is typing into the job right now (the model may poll it, not write to it). */
  userTyping?: boolean;
  /** A person has typed into the job: a wake about it never quotes its output (pattern, input). */
  typedInto?: boolean;
  /** An exited job whose process groups still have members (a backgrounded descendant). */
  cleanup?: "unconfirmed";
  /** The shell exited while processes it started run on (the job runs until they end): its exit. */
  shellExit?: ShellExit;
  /** What the shell left running, when the report builder looked (it reads the process table). */
  background?: Background;
  /** An exited job's output after the last read: how much and where, never a byte of it. */
  unread?: UnreadTally;
}

/** What the snapshot builder needs beyond the job; the report builder reads the process table for the last three. */
export interface SnapshotContext {
  now?: number;
  wakeArmed: boolean;
  wakeLevel?: "wake" | "next_turn" | undefined;
  wakePattern?: string | undefined;
  /** Leave the exit out (a cancelled call consumed nothing). */
  hideExit?: boolean;
  /** Read for running jobs by the report builder (one scan for all jobs of a call), with what the same read found. */
  listening?: string[] | undefined;
  deaf?: Deafness | undefined;
  usage?: Usage | undefined;
  /** The exited job's groups were found alive (only listings look). */
  lingering?: boolean;
  background?: ReturnType<Job["backgroundNow"]>;
}

export function snapshotOf(job: Job, context: SnapshotContext): JobSnapshot {
  const now = context.now ?? performance.now();
  const exit = context.hideExit ? undefined : job.exit;
  const size = job.terminalSize;
  return {
    jobId: job.id,
    command: job.command,
    cwd: job.cwd,
    tty: job.tty,
    ...(size ? { terminal: size } : {}),
    ...(exit ? { exit } : {}),
    elapsedMs: Math.round((job.exitedMono ?? now) - job.startedMono),
    quietMs: job.quietMs(now),
    outputBytesTotal: job.outputBytesTotal,
    outputReads: job.outputReads,
    logPath: job.logPath,
    ...(job.logPartialReason ? { logPartialReason: job.logPartialReason } : {}),
    ...(job.exit ? {} : { deadlineRemainingMs: Math.max(0, Math.round(job.deadlineMono - now)) }),
    wakeArmed: context.wakeArmed,
    ...(context.wakeLevel === "next_turn" ? { wakeLevel: "next_turn" as const } : {}),
    ...(context.wakePattern !== undefined ? { wakePattern: context.wakePattern } : {}),
    ...(context.listening && !job.exit ? { listening: context.listening } : {}),
    ...(context.deaf && !job.exit ? { deaf: context.deaf } : {}),
    ...(context.usage && !job.exit ? { usage: context.usage } : {}),
    attached: job.attached !== undefined,
    ...(job.holders.userTyping ? { userTyping: true } : {}),
    ...(job.holders.typedInto ? { typedInto: true } : {}),
    ...(context.lingering && job.exit ? { cleanup: "unconfirmed" as const } : {}),
    ...(context.background && !exit ? { shellExit: context.background.shellExit, background: context.background.processes } : {}),
    ...(exit ? { unread: job.unread } : {}),
  };
}

/** Slots in use, for the warning results carry near a full registry. */
export interface SlotUse {
  used: number;
  capacity: number;
}

/** What one `exec_command` or `write_stdin` learned: the job now, and what this call did and read. */
export interface JobReport {
  job: JobSnapshot;
  window: Window;
  waitEnd: WaitEnd;
  /** Milliseconds this call spent attached to the job. */
  wallMs: number;
  /** The output since the previous call (decoded, terminal-rendered, not yet capped). */
  output: OutputDelta;
  /** What this call sent to the job, if anything. */
  input?: InputOutcome;
  /** The PTY's size after this call, with what was asked where clamped. */
  terminal?: TerminalSize;
  /** Present when the registry is nearly full. */
  slots?: SlotUse;
  /** The call was cancelled (Esc): nothing was read, the job stays as it was. */
  cancelled?: boolean;
  /** `consumed`: this result carries the exit of a job whose wake was armed; `armed`: it stays armed. */
  wake?: "consumed" | "armed";
  /** The level of the exit wake that stays armed (`armed`), when it rides with the next turn. */
  wakeLevel?: "next_turn";
  /** The call asked for a conditional wait (`until_pattern`, `until_quiet_ms`). */
  conditional?: boolean;
  /** The line `until_pattern` matched, bounded, when that ended the wait. */
  matchedLine?: string;
  /** Present when the running job seems blocked reading its own stdin. */
  inputWait?: InputWait;
  /** What the user typed into the job for this call (`ask_user`) or since the model's last result: a count, never the bytes. */
  userInput?: UserInput;
  /** Wakes of the job a person disarmed since the model's last result on it (told once). */
  userDisarmed?: DisarmedWake[];
  /** The listening addresses differ from what the job's previous result showed (news for the text). */
  listeningChanged?: boolean;
  /** The job's memory changed noticeably since its previous result showed it (news for the text). */
  usageChanged?: boolean;
  /** Ports this call's output says the job could not get, held now, with who holds them. */
  portConflicts?: PortConflict[];
  /** `until_listening` with a URL: the HTTP status of the answer that ended the wait. */
  httpStatus?: number;
  /** The processes the shell left running differ from what the job's previous result showed (news for the text). */
  backgroundChanged?: boolean;
  /** Patterns suspended on this job since the model's last result on it (too slow on its output). */
  patternsSuspended?: SuspendedPattern[];
  /** Shown instead of `output` (still consumed): asked for (`screen: true`), or the program is on the alternate screen. */
  screen?: ScreenView;
}

/** A port a job could not get, and who holds it: a job of this runtime, or another process. */
export interface PortConflict {
  port: number;
  pid: number;
  command?: string;
  job?: { jobId: number; command: string };
}

/** `3000 held by session 2 (npm run dev)` or `3000 held by pid 4121 (node server.js), not a job of this Pi`. */
export function portConflictText(conflicts: readonly PortConflict[], inert: (text: string) => string): string {
  return conflicts
    .map(({ port, pid, command, job }) =>
      job
        ? `${port} held by session ${job.jobId} (${inert(job.command)})`
        : `${port} held by pid ${pid} (${inert(command ?? "?")}), not a job of this Pi`,
    )
    .join("; ");
}

/** What a person did to the job since the model's last result on it, as a result tells it once (see job-holders.ts). */
export interface NewsFields {
  userInput?: UserInput;
  userDisarmed?: DisarmedWake[];
}

/** A person's news as a result's fields. */
export function newsFields(news: PersonNews | undefined): NewsFields {
  return {
    ...(news?.typed ? { userInput: news.typed } : {}),
    ...(news?.disarmed ? { userDisarmed: news.disarmed } : {}),
  };
}

/** What `kill_session` did. */
export interface KillReport extends NewsFields {
  job: JobSnapshot;
  termination: Termination;
  /** The job had exited before the kill; nothing was signalled. */
  alreadyExited: boolean;
  /** The ports the job listened on before the kill: no process listens there any more, or some still do (with who). */
  portsReleased?: number[];
  portsStillHeld?: { port: number; pid?: number; command?: string }[];
  wallMs: number;
  output: OutputDelta;
}

/** One job of `list_sessions`. */
export interface JobListing extends JobSnapshot, NewsFields {
  /** The exit was reported before; the job is listed again only because its groups linger. */
  alreadyReported?: boolean;
  /** Present when the running job seems blocked reading its own stdin. */
  inputWait?: InputWait;
}

/** A wait in progress, for the UI: the job, and what this call has seen so far. */
export interface WaitProgress {
  job: JobSnapshot;
  /** The latest output of this call (at most 32 KiB, controls stripped). */
  preview: string;
  /** Bytes this call has seen so far. */
  outputBytes: number;
  /** Since this call started. */
  elapsedMs: number;
}
/** What a wake says about one job's exit: bounded metadata, never output. */
export interface WakeJob {
  jobId: number;
  command: string;
  cwd: string;
  exitCode: number | null;
  signal: string | null;
  elapsedMs: number;
  logPath: string;
  /** Why the job ended, when the runtime ended it or it failed. */
  reason?: string;
  /** What it printed that nobody read, as metadata (never a byte); whether its log is partial. */
  unread?: UnreadTally;
  logPartial?: true;
}

/** What a wake says about a job that ended: bounded metadata only, never its output. */
export function wakeOf(job: JobSnapshot): WakeJob {
  const exit = job.exit;
  const reasons = [
    exit?.stoppedBy === "timeout" ? "stopped at its timeout_s deadline" : undefined,
    exit?.stoppedBy === "log_quota" ? "stopped when its log reached the quota" : undefined,
    exit?.failure,
  ].filter((reason): reason is string => reason !== undefined);
  return {
    jobId: job.jobId,
    command: job.command,
    cwd: job.cwd,
    exitCode: exit?.exitCode ?? null,
    signal: exit?.signal ?? null,
    elapsedMs: job.elapsedMs,
    logPath: job.logPath,
    ...(reasons.length ? { reason: reasons.join("; ") } : {}),
    ...(job.unread ? { unread: job.unread } : {}),
    ...(job.logPartialReason ? { logPartial: true as const } : {}),
  };
}

/** Lines of a pipe job's output a person's view shows (a PTY job shows its screen). */
const VIEW_LOG_LINES = 40;

/**
 * What a person's view of a job shows (the picker's "view"), consuming nothing the model has not
 * read: a PTY job's screen, or a pipe job's last lines (its log's end, from memory, controls stripped).
 */
export type HumanView = { kind: "screen"; screen: ScreenView } | { kind: "output"; lines: string[] };

export async function humanView(job: Job): Promise<HumanView> {
  const screen = await job.screenView(true);
  if (screen) return { kind: "screen", screen };
  const lines = job.previewText().split("\n");
  if (lines.at(-1) === "") lines.pop();
  return { kind: "output", lines: lines.slice(-VIEW_LOG_LINES) };
}
