import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { JobListing } from "../../core/index.ts";
import { headerLines, metadata, oneLine } from "./format.ts";
import {
  backgroundLine,
  deafText,
  exitFields,
  inputWaitWord,
  killedBySchema,
  listeningInText,
  stopMessage,
  unreadWords,
  usageFields,
  usageSchema,
  userNewsFields,
  userNewsSchema,
} from "./job-fields.ts";

/** Result of `list_sessions`: one block per job, and the host clock to compute deadlines from. */

const sessionSchema = Type.Object({
  session_id: Type.Integer(),
  command: Type.String(),
  cwd: Type.String(),
  tty: Type.Boolean(),
  status: Type.Union([Type.Literal("running"), Type.Literal("exited")]),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  signal: Type.Optional(Type.String()),
  timed_out: Type.Optional(Type.Boolean()),
  killed_by: killedBySchema("Who stopped the job when it was not your kill_session."),
  failure_message: Type.Optional(Type.String()),
  unread: Type.Optional(
    Type.String({ description: "An exited job's output after your last read: lines, KB, log lines, the first failure-looking line." }),
  ),
  elapsed_seconds: Type.Number(),
  quiet_ms: Type.Integer(),
  output_bytes_total: Type.Integer(),
  log_path: Type.String(),
  log_partial: Type.Optional(Type.Boolean()),
  deadline_remaining_seconds: Type.Optional(Type.Integer()),
  attached: Type.Optional(Type.Boolean({ description: "A call is attached right now; its result reports the exit." })),
  wake_armed: Type.Boolean({ description: "One follow-up prompt will announce the exit if nothing observes it." }),
  wake_level: Type.Optional(Type.Literal("next_turn", { description: "The exit wake is told in the next turn instead." })),
  wake_on_pattern: Type.Optional(Type.String({ description: "The armed pattern: a later matching output line wakes you." })),
  listening: Type.Optional(Type.Array(Type.String(), { description: "TCP addresses the running job listens on." })),
  ...usageSchema,
  user_typing: Type.Optional(Type.Boolean({ description: "The user is typing into the job now: poll it, do not write to it." })),
  ...userNewsSchema,
  input_wait: Type.Optional(
    Type.Union([Type.Literal("likely"), Type.Literal("secret")], {
      description:
        "The job seems blocked reading its own stdin: answer it or stop it; secret: its terminal hides what is typed, ask the person (ask_user).",
    }),
  ),
  input_wait_reason: Type.Optional(Type.String()),
  shell_exit_code: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], {
      description: "The shell exited; processes it started run on until they end (background).",
    }),
  ),
  background: Type.Optional(Type.String({ description: "What the exited shell left running in the job; kill_session stops it." })),
  cleanup: Type.Optional(
    Type.Literal("unconfirmed", {
      description: "The job's leader exited, but processes of its group still run; kill_session by this id reaches them.",
    }),
  ),
});

export const listResultSchema = Type.Object({
  tool_time_utc: Type.String(),
  notices_held: Type.Optional(Type.Integer({ description: "Notices the turn budget holds for the next turn." })),
  sessions: Type.Array(sessionSchema),
});

export interface ListDetails {
  tool_time_utc: string;
  notices_held?: number;
  running: number;
  exited: number;
  /** Each job's listing fields (bounded metadata, no output): the TUI's rows are drawn from them. */
  sessions: ReturnType<typeof entry>[];
}

const COMMAND_CHARS = 200;

function entry(job: JobListing) {
  const failure = [job.exit?.failure, stopMessage(job.exit)].filter(Boolean).join("; ");
  return {
    session_id: job.jobId,
    command: oneLine(job.command, COMMAND_CHARS),
    cwd: metadata(job.cwd),
    tty: job.tty,
    status: job.exit ? ("exited" as const) : ("running" as const),
    ...(job.shellExit ? { shell_exit_code: job.shellExit.code } : {}),
    ...(job.background ? { background: backgroundLine(job.background) } : {}),
    ...exitFields(job.exit),
    ...(failure ? { failure_message: metadata(failure) } : {}),
    ...(job.unread && !job.alreadyReported ? { unread: unreadWords(job.unread, job.logPartialReason !== undefined) } : {}),
    elapsed_seconds: Math.round(job.elapsedMs / 100) / 10,
    quiet_ms: job.quietMs,
    output_bytes_total: job.outputBytesTotal,
    log_path: metadata(job.logPath),
    ...(job.logPartialReason ? { log_partial: true } : {}),
    ...(job.deadlineRemainingMs !== undefined ? { deadline_remaining_seconds: Math.ceil(job.deadlineRemainingMs / 1000) } : {}),
    ...(job.attached ? { attached: true } : {}),
    wake_armed: job.wakeArmed,
    ...(job.wakeLevel ? { wake_level: job.wakeLevel } : {}),
    ...(job.wakePattern !== undefined ? { wake_on_pattern: oneLine(job.wakePattern, 200) } : {}),
    ...(job.userTyping ? { user_typing: true } : {}),
    ...userNewsFields(job),
    ...(job.listening && (job.listening.length > 0 || job.deaf) ? { listening: job.listening.map((address) => metadata(address)) } : {}),
    ...(job.deaf ? { listening_lost: metadata(deafText(job.deaf)) } : {}),
    ...usageFields(job),
    ...(job.inputWait?.likely ? { input_wait: inputWaitWord(job.inputWait), input_wait_reason: job.inputWait.reason } : {}),
    ...(job.cleanup ? { cleanup: job.cleanup } : {}),
  };
}

/** A job's fields in the text's words: `wake_armed` is the exit wake only, so the text says `exit_wake: armed` (`next_turn`, `none`). */
function inTextWords({ wake_level, ...fields }: Omit<ReturnType<typeof entry>, "session_id">): Record<string, unknown> {
  return listeningInText(
    Object.fromEntries(
      Object.entries(fields).map(([key, value]) =>
        key === "wake_armed" ? ["exit_wake", value ? (wake_level ?? "armed") : "none"] : [key, value],
      ),
    ),
  );
}

/** What the turn budget holds back: how many notices, and the person's budget (turns per ten minutes). */
export interface HeldNotices {
  count: number;
  turns: number;
}

export function listResult(jobs: JobListing[], now: Date = new Date(), held?: HeldNotices): AgentToolResult<ListDetails> {
  const sessions = jobs.map(entry);
  const running = sessions.filter((session) => session.status === "running").length;
  const toolTimeUtc = now.toISOString();
  const summary = headerLines(
    `[${sessions.length} session${sessions.length === 1 ? "" : "s"}: ${running} running, ${sessions.length - running} exited]`,
    {
      tool_time_utc: toolTimeUtc,
      ...(held?.count ? { notices_held: `${held.count} (to save turns: ${held.turns} per 10 min; they come with your next turn)` } : {}),
    },
  );
  const blocks = sessions.map(({ session_id, ...rest }) =>
    headerLines(`session_id: ${session_id}`, inTextWords(rest)).replace(/\n/g, "\n  "),
  );
  return {
    content: [{ type: "text", text: `${summary}\n---\n${blocks.join("\n") || "(no sessions)"}` }],
    details: {
      tool_time_utc: toolTimeUtc,
      ...(held?.count ? { notices_held: held.count } : {}),
      running,
      exited: sessions.length - running,
      sessions,
    },
    structuredContent: { tool_time_utc: toolTimeUtc, ...(held?.count ? { notices_held: held.count } : {}), sessions },
  };
}
