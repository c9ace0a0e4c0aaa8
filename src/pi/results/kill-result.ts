import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { KillReport } from "../../core/runtime.ts";
import { capOutput, headerLines, metadata, oneLine, seconds } from "./format.ts";
import { type KilledBy, killedBy } from "./job-result.ts";

/** Result of `kill_session`: what was sent, whether it escalated, the exit, and the cleanup evidence. */

export const killResultSchema = Type.Object({
  status: Type.Union([Type.Literal("killed"), Type.Literal("already_exited"), Type.Literal("kill_failed"), Type.Literal("still_running")]),
  session_id: Type.Integer(),
  signal_sent: Type.Optional(Type.String()),
  escalated: Type.Boolean({ description: "SIGKILL followed because the job outlived the grace period." }),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  signal: Type.Optional(Type.String()),
  killed_by: Type.Optional(
    Type.Union([Type.Literal("user"), Type.Literal("deadline"), Type.Literal("boundary"), Type.Literal("quota")], {
      description: "The job had already been stopped by someone else: the user, its deadline, a session boundary, or its log quota.",
    }),
  ),
  cleanup: Type.Union([Type.Literal("pending"), Type.Literal("unconfirmed"), Type.Literal("confirmed")], {
    description: "confirmed: the job's processes are proven gone; unconfirmed: one may have escaped; pending: the exit was not seen.",
  }),
  survivors: Type.Optional(Type.Array(Type.Integer(), { description: "Descendants that escaped the process group and still run." })),
  log_path: Type.String(),
  cwd: Type.String(),
  wall_time_seconds: Type.Number(),
  output_bytes_total: Type.Integer(),
  failure_message: Type.Optional(Type.String()),
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
  failure_message?: string;
  log_path: string;
}

function statusOf(report: KillReport): KillDetails["status"] {
  if (report.alreadyExited) return "already_exited";
  if (report.failure) return "kill_failed";
  return report.exit ? "killed" : "still_running";
}

const TITLES: Record<KillDetails["status"], string> = {
  killed: "[killed]",
  already_exited: "[already exited]",
  kill_failed: "[kill failed]",
  still_running: "[still running after SIGKILL]",
};

/** A kill that could not stop the job is an error result: the model must know the job lives on. */
export function killResult(report: KillReport): AgentToolResult<KillDetails> {
  const status = statusOf(report);
  const logPath = metadata(report.logPath);
  const capped = capOutput(report.text, logPath);
  const stoppedBy = killedBy(report.exit);
  const failure =
    (report.failure && metadata(report.failure)) ??
    (status === "still_running"
      ? `the job did not exit within the kill's wait; it stays registered, so kill_session can be tried again`
      : undefined);
  const fields = {
    session_id: report.sessionId,
    ...(report.alreadyExited ? {} : { signal_sent: report.signal }),
    escalated: report.escalated,
    ...(report.exit ? { exit_code: report.exit.exitCode } : {}),
    ...(report.exit?.signal ? { signal: report.exit.signal } : {}),
    ...(stoppedBy ? { killed_by: stoppedBy } : {}),
    cleanup: report.cleanup,
    ...(report.survivors.length ? { survivors: report.survivors } : {}),
    log_path: logPath,
    cwd: metadata(report.cwd),
    wall_time_seconds: seconds(report.wallMs),
    output_bytes_total: report.outputBytesTotal,
    ...(failure ? { failure_message: failure } : {}),
  };
  const header = headerLines(TITLES[status], { ...fields, ...(report.survivors.length ? { survivors: report.survivors.join(", ") } : {}) });
  const details: KillDetails = {
    session_id: report.sessionId,
    command: oneLine(report.command, 200),
    status,
    ...(fields.signal_sent ? { signal_sent: fields.signal_sent } : {}),
    escalated: report.escalated,
    ...(report.exit ? { exit_code: report.exit.exitCode } : {}),
    ...(fields.signal ? { signal: fields.signal } : {}),
    ...(stoppedBy ? { killed_by: stoppedBy } : {}),
    cleanup: report.cleanup,
    ...(fields.survivors ? { survivors: fields.survivors } : {}),
    ...(failure ? { failure_message: failure } : {}),
    log_path: logPath,
  };
  return {
    content: [{ type: "text", text: `${header}\n---\n${capped.shown}` }],
    details,
    structuredContent: { status, ...fields, output: capped.content },
    ...(status === "kill_failed" || status === "still_running" ? { isError: true } : {}),
  };
}
