import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { WakeBatch, WakeJob, WakeSender } from "../core/completion.ts";
import { bounded, oneLine } from "./results/format.ts";

/** The custom message type of completion wakes (for renderers and tests). */
export const WAKE_MESSAGE_TYPE = "unified-exec-wake";

function describeJob(job: WakeJob): string {
  const parts = [
    `session ${job.sessionId}`,
    `exit_code ${job.exitCode ?? "null"}${job.signal ? ` (${job.signal})` : ""}`,
    `ran ${(job.elapsedMs / 1000).toFixed(1)}s`,
    ...(job.reason ? [bounded(job.reason, 200)] : []),
    `cwd ${bounded(job.cwd, 200)}`,
    `log ${job.logPath}`,
    `\`${oneLine(job.command, 120)}\``,
  ];
  return `- ${parts.join(" · ")}`;
}

/** The prompt text of a wake: bounded metadata of each job, never its output. */
export function wakeText(batch: WakeBatch): string {
  const count = batch.jobs.length + batch.more;
  return [
    `[unified-exec] ${count === 1 ? "A background job" : `${count} background jobs`} you asked to be woken for ${count === 1 ? "has" : "have"} exited:`,
    ...batch.jobs.map(describeJob),
    ...(batch.more > 0 ? [`- and ${batch.more} more (list_sessions shows them)`] : []),
    "write_stdin(session_id) returns any output not read yet (the full output is in the log). Continue only with work " +
      "that is still relevant to the user's request.",
  ].join("\n");
}

/**
 * Delivery through Pi: a custom message that starts a turn when Pi is idle and queues behind active
 * work as a follow-up otherwise, so it never interrupts a turn. `sendMessage` throws synchronously
 * only for a stale or unbound API, which the coordinator retries; later failures are Pi's to report.
 */
export function wakeSender(pi: ExtensionAPI): WakeSender {
  return (batch) => {
    pi.sendMessage(
      {
        customType: WAKE_MESSAGE_TYPE,
        content: wakeText(batch),
        display: true,
        details: { jobs: batch.jobs.map((job) => ({ ...job, command: oneLine(job.command, 200) })), more: batch.more },
      },
      { triggerTurn: true, deliverAs: "followUp" },
    );
  };
}
