import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { Elision, JobReport, ScreenView, SlotUse, WaitProgress } from "../../core/index.ts";
import { portConflictText } from "../../core/index.ts";
import type { ResultFormat } from "../result-format.ts";
import { codexChunkId, codexJobText } from "./codex.ts";
import { headerLines, metadata, seconds } from "./format.ts";
import {
  inOrder,
  inputWaitWord,
  jobDetailExtras,
  jobFields,
  killedBySchema,
  listeningInText,
  patternSchema,
  stopMessage,
  suspendedFields,
  usageSchema,
  userNewsFields,
  userNewsSchema,
} from "./job-fields.ts";
import { carriesNews, inTextWords, textFacts } from "./lean-header.ts";
import { capOutput, type OutputCut, outputCut, type Printed, printedOf, unshownMatches } from "./output-cap.ts";

/**
 * Results of `exec_command` and `write_stdin`. One set of fields feeds the model's text, the
 * `structuredContent` that programmatic callers read (every field), and the bounded `details` the
 * UI and the session file keep (every field but the output). The text is a lean `key: value` header
 * (only the fields that carry news this call: see `lean-header.ts`), `---`, then the output capped
 * with an honest footer — or, with `PI_UNIFIED_EXEC_FORMAT=codex`, Codex's own text.
 */

/** Schema of `structuredContent` for `exec_command` and `write_stdin`. */
export const jobResultSchema = Type.Object({
  status: Type.Union([Type.Literal("running"), Type.Literal("exited"), Type.Literal("cancelled")], {
    description: "cancelled: the call was cancelled; nothing was read and the job is as it was.",
  }),
  session_id: Type.Optional(Type.Integer({ description: "Present while the job runs: pass it to write_stdin." })),
  shell_exit_code: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], {
      description: "The shell exited but processes it started run on (see background); the job's exit_code once they end.",
    }),
  ),
  background: Type.Optional(Type.String({ description: "What the exited shell left running in the job; kill_session stops it." })),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "128 + signal number when killed by a signal." })),
  signal: Type.Optional(Type.String()),
  timed_out: Type.Optional(Type.Boolean({ description: "The job was stopped at its timeout_s deadline." })),
  killed_by: killedBySchema(
    "Who stopped the job when it was not your kill_session: the user (sessions picker), its timeout_s deadline, a session boundary (fork, reload), its log quota, or its memory over PI_UNIFIED_EXEC_MAX_JOB_RSS_MB.",
  ),
  log_path: Type.String({ description: "Every byte the job printed, for the read tool." }),
  cwd: Type.String(),
  wall_time_seconds: Type.Number(),
  chunk_id: Type.String(),
  original_token_count: Type.Integer({
    description: "ceil(bytes / 4) of what the job printed for this call, bytes dropped between reads included.",
  }),
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
  completion_notification: Type.Optional(
    Type.String({ description: "armed: one follow-up prompt when the job exits unobserved; next_turn: told in the next turn instead." }),
  ),
  ...patternSchema,
  ...userNewsSchema,
  user_typing: Type.Optional(Type.Literal(true, { description: "The user is typing into the job now: poll it, do not write to it." })),
  listening: Type.Optional(
    Type.Array(Type.String(), { description: "TCP addresses the running job listens on (127.0.0.1:8765, [::]:5173); empty when none." }),
  ),
  ...usageSchema,
  port_conflict: Type.Optional(
    Type.String({
      description: "A port the output says the job could not get, and who holds it: session N (its command), or a pid outside this Pi.",
    }),
  ),
  http_status: Type.Optional(Type.Integer({ description: "until_listening with a URL: the status of the answer that ended the wait." })),
  wait_mode: Type.Optional(Type.Literal("absolute")),
  wait_status: Type.Optional(
    Type.Union(
      [
        Type.Literal("completed"),
        Type.Literal("deadline"),
        Type.Literal("cancelled"),
        Type.Literal("matched"),
        Type.Literal("quiet"),
        Type.Literal("exited"),
        Type.Literal("steered"),
        Type.Literal("shell_exited"),
        Type.Literal("listening"),
      ],
      {
        description:
          "What ended the wait. Conditional waits (until_pattern, until_quiet_ms, until_listening): matched, quiet, listening, exited, deadline, cancelled, steered. " +
          "Absolute waits (yield_until): completed, deadline, cancelled. Any wait: steered when the user sent a message meanwhile, " +
          "shell_exited when the shell exited leaving processes running.",
      },
    ),
  ),
  matched_line: Type.Optional(Type.String({ description: "The output line until_pattern matched (at most 500 characters)." })),
  pattern_matched_unshown: Type.Optional(
    Type.String({ description: "Lines matching wake_on_pattern this result cut: their count and the first." }),
  ),
  input_wait: Type.Optional(
    Type.Union([Type.Literal("likely"), Type.Literal("secret")], {
      description:
        "The job seems blocked reading its own stdin: answer it or stop it; secret: its terminal hides what is typed, ask the person (ask_user).",
    }),
  ),
  view: Type.Optional(
    Type.Union([Type.Literal("screen"), Type.Literal("screen (alternate screen)"), Type.Literal("screen (repainting)")], {
      description:
        "output is the terminal's screen (its rows, trailing blanks trimmed), not the stream; the stream since the previous call was still read and is in the log.",
    }),
  ),
  cursor: Type.Optional(Type.String({ description: "With view: the cursor's position on the screen, row,col (1-based)." })),
  yield_until: Type.Optional(Type.String()),
  on_exit_wake: Type.Optional(Type.Literal("consumed", { description: "This result reports the exit, so no wake will follow." })),
  tool_time_utc: Type.Optional(Type.String()),
  notice: Type.Optional(Type.String()),
  warning: Type.Optional(Type.String()),
  output: Type.String({ description: "Output since the previous call, capped to its last 50 KiB / 2 000 lines (or max_output_tokens)." }),
  truncated: Type.Boolean(),
});

/** What `details` keeps of a job result: every field but the output, the command bounded, and what the UI needs. */
export type JobDetails = Partial<ReturnType<typeof resultFields>> & {
  command: string;
  status: "running" | "exited" | "cancelled";
  log_partial_reason?: string;
  requested_cols?: number;
  requested_rows?: number;
  /** The job's armed `wake_on_pattern`, for the UI. */
  wake_pattern?: string;
  /** Which signal says the job waits for input: `syscall`, `wchan` or `prompt`. */
  input_wait_reason?: string;
  yield_time_ms: number;
  /** The window the model asked for, when it was clamped to `yield_time_ms`. */
  requested_yield_time_ms?: number;
  /** Codex's parameters, as the model sent them. */
  max_output_tokens?: number;
  login?: boolean;
  /** `codex` when the model's text was Codex's own. */
  format?: ResultFormat;
  /** How the output was cut, when it was: what the job printed for this call and what the model was shown. */
  truncation?: OutputCut;
  /** The line of guidance the text carried, if any. */
  hint?: string;
  /** Where the output sits in the model's text (start and end), so the renderer never parses the text. */
  output_at?: [number, number];
};

/** What a tool adds to a job report. */
export interface JobResultExtras {
  /** Something the user should hear once (for example which shell stood in for bash). */
  notice?: string | undefined;
  /** `completion_notification`: the job's completion wake is armed (see job-fields' `completionNote`). */
  completion?: string | undefined;
  /** `wake_on_pattern`: this call armed the job's pattern (see `patternNote`). */
  patternArmed?: string | undefined;
  /** For an absolute (`yield_until`) wait: the deadline, as UTC. */
  absoluteUntil?: string | undefined;
  /** Pi's working directory (`ctx.cwd`): the text names the job's `cwd` only where it differs. */
  piCwd?: string | undefined;
  /** The call resized the terminal (`cols`/`rows` on write_stdin): the text says the new size. */
  resized?: boolean | undefined;
  /** The model's `max_output_tokens`: this call's output budget at 4 bytes a token. */
  maxOutputTokens?: number | undefined;
  /** `exec_command`'s `login`, for `details`. */
  login?: boolean | undefined;
  /** The model's text: our lean header (default) or Codex's own. */
  format?: ResultFormat | undefined;
  /** A line of guidance just in time (`guidance/hints.ts`): in the text and `details`, not `structuredContent`. */
  hint?: string | undefined;
}

/**
 * The order the model reads a job result's header in, and the fields it may carry: `chunk_id`,
 * `output_bytes_total` and `tty` never (they are in `structuredContent`); `log_path`, `cwd`,
 * `original_token_count`, `quiet_ms`, `cols` and `rows` only when they carry news (`carriesNews`);
 * the rest whenever they are set.
 */
const TEXT_ORDER = [
  "session_id",
  "shell_exit_code",
  "background",
  "exit_code",
  "signal",
  "timed_out",
  "killed_by",
  "log_path",
  "cwd",
  "wall_time_seconds",
  "original_token_count",
  "quiet_ms",
  "omitted_bytes",
  "cols",
  "rows",
  "input",
  "input_pending_bytes",
  "input_refused_bytes",
  "failure_message",
  "log_partial",
  "completion_notification",
  "wake_on_pattern",
  "until_pattern",
  "user_input",
  "user_disarmed",
  "user_typing",
  "wait_mode",
  "wait_status",
  "http_status",
  "matched_line",
  "pattern_matched_unshown",
  "input_wait",
  "listening",
  "listening_lost",
  "port_conflict",
  "memory_mb",
  "cpu_seconds",
  "view",
  "cursor",
  "yield_until",
  "tool_time_utc",
  "on_exit_wake",
  "notice",
  "warning",
] as const;

/** Every field, in the same reading order, for `structuredContent`. */
const FIELD_ORDER = [
  ...TEXT_ORDER.slice(0, TEXT_ORDER.indexOf("original_token_count")),
  "chunk_id",
  "original_token_count",
  "output_bytes_total",
  "quiet_ms",
  "omitted_bytes",
  "tty",
  ...TEXT_ORDER.slice(TEXT_ORDER.indexOf("cols")),
] as const;

/** The warning results carry while the registry is nearly full. */
function slotWarning(slots: SlotUse | undefined): string | undefined {
  if (!slots) return undefined;
  return `${slots.used} of ${slots.capacity} job slots are in use; stop jobs you no longer need with kill_session, or new commands will be refused`;
}

/**
 * A partial result while the call waits: the output so far, and the call's real window (`windowMs`,
 * after the tool's clamps) or its absolute deadline, so the row shows how long the wait may last.
 */
export function progressResult(progress: WaitProgress, windowMs: number, absoluteUntil?: string): AgentToolResult<JobDetails> {
  return {
    content: [{ type: "text", text: progress.preview }],
    details: {
      ...jobFields(progress.job),
      ...jobDetailExtras(progress.job),
      status: "running",
      wall_time_seconds: seconds(progress.elapsedMs),
      output_bytes_total: progress.outputBytes,
      yield_time_ms: windowMs,
      ...(absoluteUntil ? { yield_until: absoluteUntil } : {}),
    },
  };
}

const WAIT_STATUS = {
  exited: "exited",
  deadline: "deadline",
  aborted: "cancelled",
  steered: "steered",
  matched: "matched",
  quiet: "quiet",
  listening: "listening",
  background: "shell_exited",
} as const;

/**
 * `wait_status`: every conditional wait says which end came first; an absolute wait says `completed`
 * for the exit, as before conditions existed; any wait says `steered` and `cancelled`.
 */
function waitStatus(report: JobReport, absolute: boolean) {
  if (report.conditional || report.waitEnd === "steered" || report.cancelled) return WAIT_STATUS[report.waitEnd];
  if (absolute) return report.waitEnd === "exited" ? "completed" : WAIT_STATUS[report.waitEnd];
  return undefined;
}

/** `view` and `cursor` of a result that shows the terminal's screen instead of the stream. */
function screenFields(screen: ScreenView | undefined): { view?: `screen${"" | " (alternate screen)" | " (repainting)"}`; cursor?: string } {
  if (!screen) return {};
  const view = screen.alternate ? "screen (alternate screen)" : screen.repainting ? "screen (repainting)" : "screen";
  return { view, cursor: `${screen.cursor.row},${screen.cursor.col}` };
}

/**
 * What this call shows the model and what it counts as printed: the stream since the previous call,
 * or a PTY job's screen, which replaces the stream as the output (the stream was consumed all the
 * same; the log keeps it), counted as the text it is.
 */
function shownSource(report: JobReport): { text: string; printed: Printed; omittedBytes: number; elided?: Elision | undefined } {
  const { output } = report;
  if (!report.screen) return { text: output.text, printed: printedOf(output), omittedBytes: output.omittedBytes, elided: output.elided };
  const text = report.screen.lines.join("\n");
  return { text, printed: printedOf({ text, omittedBytes: 0 }), omittedBytes: 0 };
}

/** Every field of a job result, from the report's snapshot and what the call did; `printedBytes` from {@link shownSource}. */
function resultFields(report: JobReport, extras: JobResultExtras, printedBytes: number) {
  const exit = report.job.exit;
  const absolute = extras.absoluteUntil !== undefined;
  const status = waitStatus(report, absolute);
  const failures = [report.input?.failure, exit?.failure, stopMessage(exit)].filter((failure): failure is string => failure !== undefined);
  const warning = slotWarning(report.slots);
  return {
    ...jobFields(report.job),
    wall_time_seconds: seconds(report.wallMs),
    chunk_id: codexChunkId(),
    // Codex's estimate of 4 bytes per token, over what the job printed for this call (dropped bytes included).
    original_token_count: Math.ceil(printedBytes / 4),
    ...(report.output.omittedBytes > 0 ? { omitted_bytes: report.output.omittedBytes } : {}),
    ...(report.terminal ? { cols: report.terminal.cols, rows: report.terminal.rows } : {}),
    ...(report.input ? { input: report.input.input } : {}),
    ...(report.input?.pendingBytes ? { input_pending_bytes: report.input.pendingBytes } : {}),
    ...(report.input?.refusedBytes ? { input_refused_bytes: report.input.refusedBytes } : {}),
    ...(failures.length ? { failure_message: failures.map(metadata).join("; ") } : {}),
    ...(extras.completion ? { completion_notification: extras.completion } : {}),
    ...suspendedFields(report.patternsSuspended, extras.patternArmed),
    ...userNewsFields(report),
    ...(absolute ? { wait_mode: "absolute" as const } : {}),
    ...(status ? { wait_status: status } : {}),
    ...(report.httpStatus !== undefined ? { http_status: report.httpStatus } : {}),
    ...(report.matchedLine !== undefined ? { matched_line: metadata(report.matchedLine) } : {}),
    ...(report.portConflicts ? { port_conflict: portConflictText(report.portConflicts, metadata) } : {}),
    ...(report.inputWait?.likely ? { input_wait: inputWaitWord(report.inputWait) } : {}),
    ...screenFields(report.screen),
    ...(absolute ? { yield_until: extras.absoluteUntil, tool_time_utc: new Date().toISOString() } : {}),
    ...(report.wake === "consumed" ? { on_exit_wake: "consumed" as const } : {}),
    ...(extras.notice ? { notice: metadata(extras.notice) } : {}),
    ...(warning ? { warning } : {}),
  };
}

/** `[still running]`, `[exited]`, `[cancelled]`; a stop the model did not ask for reads `[killed]` (`status` stays `exited`). */
function titleOf(status: "running" | "exited" | "cancelled", killed: boolean): string {
  if (status === "exited" && killed) return "[killed]";
  return { cancelled: "[cancelled]", exited: "[exited]", running: "[still running]" }[status];
}

/** The model's text in our format: the lean header, `---`, the output capped with the honest footer. */
function defaultText(
  report: JobReport,
  extras: JobResultExtras,
  all: ReturnType<typeof resultFields>,
  status: JobDetails["status"],
  { text, printed, omittedBytes }: ReturnType<typeof shownSource>,
) {
  const capped = capOutput(text, printed, all.log_path, extras.maxOutputTokens);
  const facts = textFacts(report, {
    status,
    truncated: capped.truncation.truncated,
    omittedBytes,
    piCwd: extras.piCwd,
    resized: extras.resized,
  });
  // A matching line the cap left out is named here, by the call that cut it (it never wakes later).
  const unshown = unshownMatches(report.screen ? undefined : report.output.matched, printed.lines, capped.truncation.outputLines);
  const named = unshown ? { ...all, pattern_matched_unshown: unshown } : all;
  const fields = inTextWords(
    listeningInText(
      inOrder(
        named,
        TEXT_ORDER.filter((key) => carriesNews(key, facts)),
      ),
    ),
    { sentBytes: report.input?.sentBytes, window: report.window, hint: extras.hint },
  );
  const header = `${headerLines(titleOf(status, all.killed_by !== undefined), fields)}\n---\n`;
  return {
    text: `${header}${capped.shown}`,
    output: capped.content,
    outputAt: [header.length, header.length + capped.content.length] as [number, number],
    cut: facts.cut ? outputCut(printed, capped.truncation) : undefined,
    unshown,
  };
}

export function jobResult(report: JobReport, extras: JobResultExtras = {}): AgentToolResult<JobDetails> {
  const exit = report.job.exit;
  // Counted once: a screen is joined and its lines counted here, not again for each use.
  const source = shownSource(report);
  const all = resultFields(report, extras, source.printed.bytes);
  const status = report.cancelled ? ("cancelled" as const) : exit ? ("exited" as const) : ("running" as const);
  const codex = extras.format === "codex";
  const model = codex ? codexJobText(report, source, extras, all) : defaultText(report, extras, all, status, source);
  const unshown = "unshown" in model ? (model.unshown as string | undefined) : undefined;
  const named = unshown ? { ...all, pattern_matched_unshown: unshown } : all;
  const details: JobDetails = {
    status,
    ...named,
    ...jobDetailExtras(report.job),
    ...(report.terminal?.requestedCols !== undefined ? { requested_cols: report.terminal.requestedCols } : {}),
    ...(report.terminal?.requestedRows !== undefined ? { requested_rows: report.terminal.requestedRows } : {}),
    ...(report.inputWait?.reason ? { input_wait_reason: report.inputWait.reason } : {}),
    yield_time_ms: report.window.ms,
    ...(report.window.requestedMs !== undefined ? { requested_yield_time_ms: report.window.requestedMs } : {}),
    ...(extras.maxOutputTokens !== undefined ? { max_output_tokens: extras.maxOutputTokens } : {}),
    ...(extras.login !== undefined ? { login: extras.login } : {}),
    ...(codex ? { format: "codex" as const } : {}),
    ...(extras.hint ? { hint: extras.hint } : {}),
    ...(model.cut ? { truncation: model.cut } : {}),
    output_at: model.outputAt,
  };
  return {
    content: [{ type: "text", text: model.text }],
    details,
    structuredContent: { status, ...inOrder(named, FIELD_ORDER), output: model.output, truncated: model.cut !== undefined },
  };
}
