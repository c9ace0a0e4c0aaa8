import { randomBytes } from "node:crypto";
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { joinRetained } from "../core/head-tail-buffer.ts";
import type { JobReport } from "../core/runtime.ts";
import { stripControlSequences } from "../core/sanitize.ts";

/**
 * The only formatter of job results. One set of fields feeds the model's text (a `key: value` header,
 * `---`, then the output), the `structuredContent` that programmatic callers read, and the bounded
 * `details` the UI and the session file keep.
 */

/** Schema of `structuredContent` for `exec_command` and `write_stdin`. */
export const jobResultSchema = Type.Object({
  status: Type.Union([Type.Literal("running"), Type.Literal("exited")]),
  session_id: Type.Optional(Type.Integer({ description: "Present while the job runs: pass it to write_stdin." })),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "128 + signal number when killed by a signal." })),
  signal: Type.Optional(Type.String()),
  failure_message: Type.Optional(Type.String()),
  cwd: Type.String(),
  wall_time_seconds: Type.Number(),
  chunk_id: Type.String(),
  original_token_count: Type.Integer(),
  output_bytes_total: Type.Integer(),
  quiet_ms: Type.Integer(),
  omitted_bytes: Type.Optional(Type.Integer()),
  tty: Type.Boolean(),
  output: Type.String(),
});

/** What `details` keeps of a job result: everything but the output, and the command bounded. */
export interface JobDetails {
  command: string;
  cwd: string;
  status: "running" | "exited";
  session_id?: number;
  exit_code?: number | null;
  signal?: string;
  failure_message?: string;
  wall_time_seconds: number;
  output_bytes_total: number;
  quiet_ms: number;
  yield_time_ms: number;
  /** The window the model asked for, when it was clamped to `yield_time_ms`. */
  requested_yield_time_ms?: number;
}

const DETAILS_COMMAND_CHARS = 1_000;

function bounded(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

/** Model-facing text of a report's output: decoded, control sequences stripped. */
function outputText(report: JobReport): string {
  return stripControlSequences(joinRetained(report.output).toString("utf8"));
}

export function jobResult(report: JobReport): AgentToolResult<JobDetails> {
  const output = outputText(report);
  const exit = report.exit;
  const wallSeconds = Math.round(report.wallMs) / 1000;
  // Header fields in the order the model reads them; optional ones appear only when they apply.
  const fields = {
    ...(report.sessionId !== undefined ? { session_id: report.sessionId } : {}),
    ...(exit ? { exit_code: exit.exitCode } : {}),
    ...(exit?.signal ? { signal: exit.signal } : {}),
    cwd: report.cwd,
    wall_time_seconds: wallSeconds,
    chunk_id: randomBytes(3).toString("hex"),
    // Codex's estimate of 4 bytes per token, over the untruncated output of this call.
    original_token_count: Math.ceil(Buffer.byteLength(output) / 4),
    output_bytes_total: report.outputBytesTotal,
    quiet_ms: report.quietMs,
    ...(report.output.omittedBytes > 0 ? { omitted_bytes: report.output.omittedBytes } : {}),
    tty: false,
    ...(exit?.failure ? { failure_message: exit.failure } : {}),
  };
  const status = exit ? ("exited" as const) : ("running" as const);
  const header = [exit ? "[exited]" : "[still running]"];
  for (const [key, value] of Object.entries(fields)) header.push(`${key}: ${value ?? "null"}`);

  const details: JobDetails = {
    command: bounded(report.command, DETAILS_COMMAND_CHARS),
    cwd: report.cwd,
    status,
    ...(fields.session_id !== undefined ? { session_id: fields.session_id } : {}),
    ...(exit ? { exit_code: exit.exitCode } : {}),
    ...(fields.signal ? { signal: fields.signal } : {}),
    ...(fields.failure_message ? { failure_message: fields.failure_message } : {}),
    wall_time_seconds: wallSeconds,
    output_bytes_total: report.outputBytesTotal,
    quiet_ms: report.quietMs,
    yield_time_ms: report.window.ms,
    ...(report.window.requestedMs !== undefined ? { requested_yield_time_ms: report.window.requestedMs } : {}),
  };

  return {
    content: [{ type: "text", text: `${header.join("\n")}\n---\n${output}` }],
    details,
    structuredContent: { status, ...fields, output },
  };
}
