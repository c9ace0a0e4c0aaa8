import { Type } from "typebox";
import { patterns, userNewsSchema } from "./job-fields.ts";

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
  ...patterns.schema,
  ...userNewsSchema,
  user_typing: Type.Optional(Type.Literal(true, { description: "The user is typing into the job now: poll it, do not write to it." })),
  listening: Type.Optional(
    Type.Array(Type.String(), { description: "TCP addresses the running job listens on (127.0.0.1:8765, [::]:5173); empty when none." }),
  ),
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
  input_wait: Type.Optional(Type.Literal("likely", { description: "The job seems blocked reading its own stdin: answer it or stop it." })),
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
