import { resolve } from "node:path";
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { DisarmedWake, KillReport } from "../../core/index.ts";
import { headerLines, metadata, oneLine, seconds } from "./format.ts";
import { exitFields, type KilledBy, killedBySchema, userNewsFields, userNewsSchema } from "./job-fields.ts";
import { capOutput, printedOf } from "./output-cap.ts";

/** Result of `kill_session`: what was sent, whether it escalated, the exit, and the cleanup evidence. */

export const killResultSchema = Type.Object({
  status: Type.Union([Type.Literal("killed"), Type.Literal("already_exited"), Type.Literal("kill_failed"), Type.Literal("still_running")]),
  session_id: Type.Integer(),
  signal_sent: Type.Optional(Type.String()),
  escalated: Type.Boolean({ description: "SIGKILL followed because the job outlived the grace period." }),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  signal: Type.Optional(Type.String()),
  killed_by: killedBySchema(
    "The job had already been stopped by someone else: the user, its deadline, a session boundary, its log quota or its memory.",
  ),
  cleanup: Type.Union([Type.Literal("pending"), Type.Literal("unconfirmed"), Type.Literal("confirmed")], {
    description: "confirmed: the job's processes are proven gone; unconfirmed: one may have escaped; pending: the exit was not seen.",
  }),
  survivors: Type.Optional(Type.Array(Type.Integer(), { description: "Descendants that escaped the process group and still run." })),
  ports_released: Type.Optional(Type.Array(Type.Integer(), { description: "Ports the job listened on that no process holds now." })),
  ports_still_held: Type.Optional(
    Type.Array(Type.String(), { description: "Ports the job listened on that a process still holds: PORT by pid N (command)." }),
  ),
  log_path: Type.String(),
  cwd: Type.String(),
  wall_time_seconds: Type.Number(),
  output_bytes_total: Type.Integer(),
  failure_message: Type.Optional(Type.String()),
  ...userNewsSchema,
  output: Type.String(),
});

export interface KillDetails {
  session_id: number;
  command: string;
  status: "killed" | "already_exited" | "kill_failed" | "still_running";
  signal_sent?: string;
  escalated: boolean;
  exit_code?: number | null;
  signal?: string;
  killed_by?: KilledBy;
  cleanup: "pending" | "unconfirmed" | "confirmed";
  survivors?: number[];
  ports_released?: number[];
  ports_still_held?: string[];
  failure_message?: string;
  log_path: string;
  cwd: string;
  wall_time_seconds: number;
  output_bytes_total: number;
  user_input?: string;
  user_disarmed?: DisarmedWake[];
  /** Where the output sits in the model's text, for the renderer. */
  output_at?: [number, number];
}

function statusOf(report: KillReport): KillDetails["status"] {
  if (report.alreadyExited) return "already_exited";
  if (report.termination.failure) return "kill_failed";
  return report.job.exit ? "killed" : "still_running";
}

const TITLES: Record<KillDetails["status"], string> = {
  killed: "[killed]",
  already_exited: "[already exited]",
  kill_failed: "[kill failed]",
  still_running: "[still running after SIGKILL]",
};

/**
 * A kill that could not stop the job is an error result: the model must know the job lives on. The
 * text follows the lean header's rules: `cwd` only where it differs from Pi's (`piCwd`), never
 * `output_bytes_total` (both stay in `structuredContent` and `details`).
 */
export function killResult(report: KillReport, piCwd?: string): AgentToolResult<KillDetails> {
  const { job, termination } = report;
  const status = statusOf(report);
  const logPath = metadata(job.logPath);
  // The footer counts what the job printed, as a job result's does: the text may hold only the read's ends.
  const capped = capOutput(report.output.text, printedOf(report.output), logPath);
  const failure =
    (termination.failure && metadata(termination.failure)) ??
    (status === "still_running"
      ? `the job did not exit within the kill's wait; it stays registered, so kill_session can be tried again`
      : undefined);
  const { killed_by, exit_code, signal } = exitFields(job.exit);
  const fields = {
    session_id: job.jobId,
    ...(report.alreadyExited ? {} : { signal_sent: termination.signal }),
    escalated: termination.escalated,
    ...(exit_code !== undefined ? { exit_code } : {}),
    ...(signal ? { signal } : {}),
    ...(killed_by ? { killed_by } : {}),
    cleanup: termination.cleanup,
    ...(termination.survivors.length ? { survivors: termination.survivors } : {}),
    ...(report.portsReleased ? { ports_released: report.portsReleased } : {}),
    ...(report.portsStillHeld
      ? {
          ports_still_held: report.portsStillHeld.map(({ port, pid, command }) =>
            pid === undefined ? `${port}` : `${port} by pid ${pid}${command ? ` (${oneLine(command, 80)})` : ""}`,
          ),
        }
      : {}),
    log_path: logPath,
    cwd: metadata(job.cwd),
    wall_time_seconds: seconds(report.wallMs),
    output_bytes_total: job.outputBytesTotal,
    ...(failure ? { failure_message: failure } : {}),
    ...userNewsFields(report),
  };
  const { cwd, output_bytes_total: _total, ...shown } = fields;
  const header = headerLines(TITLES[status], {
    ...shown,
    ...(fields.survivors ? { survivors: fields.survivors.join(", ") } : {}),
    ...(piCwd === undefined || resolve(piCwd) !== job.cwd ? { cwd } : {}),
  });
  const separated = `${header}\n---\n`;
  const details: KillDetails = {
    status,
    ...fields,
    command: oneLine(job.command, 200),
    output_at: [separated.length, separated.length + capped.content.length],
  };
  return {
    content: [{ type: "text", text: `${separated}${capped.shown}` }],
    details,
    structuredContent: { status, ...fields, output: capped.content },
    ...(status === "kill_failed" || status === "still_running" ? { isError: true } : {}),
  };
}
