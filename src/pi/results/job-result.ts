import { randomBytes } from "node:crypto";
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { JobExit, StopReason } from "../../core/job.ts";
import type { WaitProgress } from "../../core/progress.ts";
import type { JobReport, SlotUse } from "../../core/runtime.ts";
import { capOutput, headerLines, metadata, oneLine, seconds, truncationDetails } from "./format.ts";

/**
 * Results of `exec_command` and `write_stdin`. One set of fields feeds the model's text (a
 * `key: value` header, `---`, then the output), the `structuredContent` that programmatic callers
 * read, and the bounded `details` the UI and the session file keep.
 */

/** Schema of `structuredContent` for `exec_command` and `write_stdin`. */
export const jobResultSchema = Type.Object({
  status: Type.Union([Type.Literal("running"), Type.Literal("exited"), Type.Literal("cancelled")], {
    description: "cancelled: the call was cancelled; nothing was read and the job is as it was.",
  }),
  session_id: Type.Optional(Type.Integer({ description: "Present while the job runs: pass it to write_stdin." })),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "128 + signal number when killed by a signal." })),
  signal: Type.Optional(Type.String()),
  timed_out: Type.Optional(Type.Boolean({ description: "The job was stopped at its timeout_s deadline." })),
  killed_by: Type.Optional(
    Type.Union([Type.Literal("user"), Type.Literal("deadline"), Type.Literal("boundary"), Type.Literal("quota")], {
      description:
        "Who stopped the job when it was not your kill_session: the user (sessions picker), its timeout_s deadline, a session boundary (fork, reload), or its log quota.",
    }),
  ),
  log_path: Type.String({ description: "Every byte the job printed, for the read tool." }),
  cwd: Type.String(),
  wall_time_seconds: Type.Number(),
  chunk_id: Type.String(),
  original_token_count: Type.Integer({ description: "ceil(bytes / 4) of this call's output before the cap." }),
  output_bytes_total: Type.Integer(),
  quiet_ms: Type.Integer(),
  omitted_bytes: Type.Optional(Type.Integer()),
  tty: Type.Boolean(),
  cols: Type.Optional(Type.Integer()),
  rows: Type.Optional(Type.Integer()),
  input: Type.Optional(Type.Union([Type.Literal("bytes"), Type.Literal("interrupt"), Type.Literal("eof")])),
  input_pending_bytes: Type.Optional(Type.Integer({ description: "Bytes of stdin the job has not read yet (bounded at 1 MiB per job)." })),
  input_refused_bytes: Type.Optional(
    Type.Integer({ description: "Bytes of this input that did not fit in the job's stdin; send them again later." }),
  ),
  failure_message: Type.Optional(Type.String()),
  log_partial: Type.Optional(Type.Boolean()),
  completion_notification: Type.Optional(Type.String({ description: "armed: one follow-up prompt when the job exits unobserved." })),
  wait_mode: Type.Optional(Type.Literal("absolute")),
  wait_status: Type.Optional(Type.Union([Type.Literal("completed"), Type.Literal("deadline"), Type.Literal("cancelled")])),
  yield_until: Type.Optional(Type.String()),
  on_exit_wake: Type.Optional(Type.Literal("consumed", { description: "This result reports the exit, so no wake will follow." })),
  tool_time_utc: Type.Optional(Type.String()),
  notice: Type.Optional(Type.String()),
  warning: Type.Optional(Type.String()),
  output: Type.String({ description: "Output since the previous call, capped to its last 50 KiB / 2 000 lines." }),
  truncated: Type.Boolean(),
});

/** What `details` keeps of a job result: everything but the output, and the command bounded. */
export interface JobDetails {
  command: string;
  cwd: string;
  status: "running" | "exited" | "cancelled";
  session_id?: number;
  exit_code?: number | null;
  signal?: string;
  timed_out?: boolean;
  killed_by?: KilledBy;
  failure_message?: string;
  log_path: string;
  log_partial_reason?: string;
  input?: "bytes" | "interrupt" | "eof";
  input_pending_bytes?: number;
  input_refused_bytes?: number;
  wall_time_seconds: number;
  output_bytes_total: number;
  quiet_ms: number;
  omitted_bytes?: number;
  tty: boolean;
  cols?: number;
  rows?: number;
  requested_cols?: number;
  requested_rows?: number;
  yield_time_ms: number;
  /** The window the model asked for, when it was clamped to `yield_time_ms`. */
  requested_yield_time_ms?: number;
  /** How the output was capped, when it was. */
  truncation?: ReturnType<typeof truncationDetails>;
  completion_notification?: string;
  wait_mode?: "absolute";
  wait_status?: "completed" | "deadline" | "cancelled";
  yield_until?: string;
  on_exit_wake?: "consumed";
}

/** What a tool adds to a job report. */
export interface JobResultExtras {
  /** Something the user should hear once (for example which shell stood in for bash). */
  notice?: string | undefined;
  /** `completion_notification`: the job's completion wake is armed (see {@link completionNote}). */
  completion?: string | undefined;
  /** For an absolute (`yield_until`) wait: the deadline, as UTC. */
  absoluteUntil?: string | undefined;
}

const DETAILS_COMMAND_CHARS = 1_000;

/** Who stopped a job, when it was not the model's own `kill_session`. */
export type KilledBy = "user" | "deadline" | "boundary" | "quota";

const KILLED_BY: Partial<Record<StopReason, KilledBy>> = { user: "user", timeout: "deadline", boundary: "boundary", log_quota: "quota" };

/** `killed_by` of an exit: set for a stop the model did not ask for. */
export function killedBy(exit: JobExit | undefined): KilledBy | undefined {
  return exit?.stoppedBy ? KILLED_BY[exit.stoppedBy] : undefined;
}

/**
 * `completion_notification` for a job whose wake is armed. Print and JSON runs end the process with
 * the run: say so rather than promise a wake that cannot come.
 */
export function completionNote(armed: boolean | undefined, wakesOutliveRun: boolean): string | undefined {
  if (!armed) return undefined;
  return wakesOutliveRun
    ? "armed"
    : "armed, but in this print/JSON run it can only arrive while the run is still going; poll with write_stdin instead";
}

/** Why the runtime ended the job, when it did, in words the model can act on. */
export function stopMessage(exit: JobExit | undefined): string | undefined {
  if (exit?.stoppedBy === "log_quota") return "stopped because its log reached the quota (PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop)";
  return undefined;
}

/** The warning results carry while the registry is nearly full. */
function slotWarning(slots: SlotUse | undefined): string | undefined {
  if (!slots) return undefined;
  return `${slots.used} of ${slots.capacity} job slots are in use; stop jobs you no longer need with kill_session, or new commands will be refused`;
}

/** A streaming update while a call waits: the live preview and what the footer needs. */
export function progressResult(progress: WaitProgress): AgentToolResult<JobDetails> {
  return {
    content: [{ type: "text", text: progress.preview }],
    details: {
      command: oneLine(progress.command, DETAILS_COMMAND_CHARS),
      cwd: metadata(progress.cwd),
      status: "running",
      session_id: progress.sessionId,
      log_path: metadata(progress.logPath),
      wall_time_seconds: seconds(progress.elapsedMs),
      output_bytes_total: progress.outputBytes,
      quiet_ms: 0,
      tty: false,
      yield_time_ms: 0,
    },
  };
}

const WAIT_STATUS = { exited: "completed", deadline: "deadline", aborted: "cancelled" } as const;

export function jobResult(report: JobReport, extras: JobResultExtras = {}): AgentToolResult<JobDetails> {
  const exit = report.exit;
  const absolute = extras.absoluteUntil !== undefined;
  const waitStatus = absolute || report.cancelled ? WAIT_STATUS[report.waitEnd] : undefined;
  // Metadata as the model reads it: one line each, nothing in it interpreted.
  const logPath = metadata(report.logPath);
  const cwd = metadata(report.cwd);
  const capped = capOutput(report.text, logPath);
  const failures = [report.input?.failure, exit?.failure, stopMessage(exit)]
    .filter((failure): failure is string => failure !== undefined)
    .map(metadata);
  const wallSeconds = seconds(report.wallMs);
  const warning = slotWarning(report.slots);
  const stoppedBy = killedBy(exit);

  // Header fields in the order the model reads them; optional ones appear only when they apply.
  const fields = {
    ...(report.sessionId !== undefined ? { session_id: report.sessionId } : {}),
    ...(exit ? { exit_code: exit.exitCode } : {}),
    ...(exit?.signal ? { signal: exit.signal } : {}),
    ...(exit?.stoppedBy === "timeout" ? { timed_out: true } : {}),
    ...(stoppedBy ? { killed_by: stoppedBy } : {}),
    log_path: logPath,
    cwd,
    wall_time_seconds: wallSeconds,
    chunk_id: randomBytes(3).toString("hex"),
    // Codex's estimate of 4 bytes per token, over this call's output before the cap.
    original_token_count: Math.ceil(Buffer.byteLength(report.text) / 4),
    output_bytes_total: report.outputBytesTotal,
    quiet_ms: report.quietMs,
    ...(report.omittedBytes > 0 ? { omitted_bytes: report.omittedBytes } : {}),
    tty: report.tty,
    ...(report.terminal ? { cols: report.terminal.cols, rows: report.terminal.rows } : {}),
    ...(report.input ? { input: report.input.input } : {}),
    ...(report.input?.pendingBytes ? { input_pending_bytes: report.input.pendingBytes } : {}),
    ...(report.input?.refusedBytes ? { input_refused_bytes: report.input.refusedBytes } : {}),
    ...(failures.length ? { failure_message: failures.join("; ") } : {}),
    ...(report.logPartialReason ? { log_partial: true } : {}),
    ...(extras.completion ? { completion_notification: extras.completion } : {}),
    ...(absolute ? { wait_mode: "absolute" as const } : {}),
    ...(waitStatus ? { wait_status: waitStatus } : {}),
    ...(absolute ? { yield_until: extras.absoluteUntil, tool_time_utc: new Date().toISOString() } : {}),
    ...(report.wakeConsumed ? { on_exit_wake: "consumed" as const } : {}),
    ...(extras.notice ? { notice: metadata(extras.notice) } : {}),
    ...(warning ? { warning } : {}),
  };
  const status = report.cancelled ? ("cancelled" as const) : exit ? ("exited" as const) : ("running" as const);

  const details: JobDetails = {
    command: oneLine(report.command, DETAILS_COMMAND_CHARS),
    cwd,
    status,
    ...(fields.session_id !== undefined ? { session_id: fields.session_id } : {}),
    ...(exit ? { exit_code: exit.exitCode } : {}),
    ...(fields.signal ? { signal: fields.signal } : {}),
    ...(fields.timed_out ? { timed_out: true } : {}),
    ...(stoppedBy ? { killed_by: stoppedBy } : {}),
    ...(fields.failure_message ? { failure_message: fields.failure_message } : {}),
    log_path: logPath,
    ...(report.logPartialReason ? { log_partial_reason: metadata(report.logPartialReason) } : {}),
    ...(fields.input ? { input: fields.input } : {}),
    ...(fields.input_pending_bytes ? { input_pending_bytes: fields.input_pending_bytes } : {}),
    ...(fields.input_refused_bytes ? { input_refused_bytes: fields.input_refused_bytes } : {}),
    wall_time_seconds: wallSeconds,
    output_bytes_total: report.outputBytesTotal,
    quiet_ms: report.quietMs,
    ...(fields.omitted_bytes ? { omitted_bytes: fields.omitted_bytes } : {}),
    tty: report.tty,
    ...(report.terminal ? { cols: report.terminal.cols, rows: report.terminal.rows } : {}),
    ...(report.terminal?.requestedCols !== undefined ? { requested_cols: report.terminal.requestedCols } : {}),
    ...(report.terminal?.requestedRows !== undefined ? { requested_rows: report.terminal.requestedRows } : {}),
    yield_time_ms: report.window.ms,
    ...(report.window.requestedMs !== undefined ? { requested_yield_time_ms: report.window.requestedMs } : {}),
    ...(capped.truncation.truncated ? { truncation: truncationDetails(capped.truncation) } : {}),
    ...(fields.completion_notification ? { completion_notification: fields.completion_notification } : {}),
    ...(fields.wait_mode ? { wait_mode: fields.wait_mode } : {}),
    ...(fields.wait_status ? { wait_status: fields.wait_status } : {}),
    ...(fields.yield_until ? { yield_until: fields.yield_until } : {}),
    ...(fields.on_exit_wake ? { on_exit_wake: fields.on_exit_wake } : {}),
  };
  // A stop the model did not ask for reads `[killed]`; `status` stays `exited` for programmatic callers.
  const title =
    status === "exited" && stoppedBy ? "[killed]" : { cancelled: "[cancelled]", exited: "[exited]", running: "[still running]" }[status];

  return {
    content: [{ type: "text", text: `${headerLines(title, fields)}\n---\n${capped.shown}` }],
    details,
    structuredContent: { status, ...fields, output: capped.content, truncated: capped.truncation.truncated },
  };
}
