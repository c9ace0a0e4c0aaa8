import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { JobSnapshot } from "../core/index.ts";
import { metadata, oneLine, shortDuration } from "./results/format.ts";
import type { SessionRuntimes } from "./session-runtimes.ts";

/**
 * After a compaction the model has forgotten which jobs it started, and starts the same server
 * twice, or never reads the end of one. The first model request after a compaction carries one
 * note listing the live jobs and the jobs that exited unread.
 *
 * It is added through Pi's `context` event, which shapes each request without touching the
 * session: nothing is saved (no duplicate notes pile up), no turn is started, and it reaches the
 * very next request whatever triggered the compaction (`/compact`, a threshold, an overflow, in the
 * middle of a run). "Once per compaction" is read off the session itself, so it survives `/reload`:
 * the note goes with every request after the latest compaction entry until an assistant message
 * has answered one (a request that failed is sent again with it).
 */

/** The note's custom message type. Its text starts with `[unified-exec jobs]`, never a wake's `[unified-exec]`. */
export const JOBS_NOTE_TYPE = "unified-exec-jobs";

interface BranchEntry {
  type: string;
  message?: { role?: string; stopReason?: string };
}

/** Whether the latest compaction on the branch has not been answered by the model yet. */
function compactionUnanswered(branch: readonly BranchEntry[]): boolean {
  let at = branch.length - 1;
  while (at >= 0 && branch[at]!.type !== "compaction") at--;
  if (at < 0) return false;
  return !branch
    .slice(at + 1)
    .some(
      (entry) =>
        entry.type === "message" &&
        entry.message?.role === "assistant" &&
        entry.message.stopReason !== "error" &&
        entry.message.stopReason !== "aborted",
    );
}

/** At most this many addresses per job in the note: a job listening on hundreds of ports says how many more. */
const NOTE_ADDRESSES = 8;

function addresses(listening: readonly string[]): string {
  const shown = listening.slice(0, NOTE_ADDRESSES).map((address) => metadata(address));
  const more = listening.length - shown.length;
  return `${shown.join(", ")}${more > 0 ? ` and ${more} more (list_sessions shows them)` : ""}`;
}

/** `exited 0`, `exited 143 (SIGTERM)`, `exited (code unknown)`. */
function exitWords(job: JobSnapshot): string {
  const exit = job.exit;
  const code = exit?.exitCode ?? null;
  return `exited ${code === null ? "(code unknown)" : code}${exit?.signal ? ` (${metadata(exit.signal)})` : ""}`;
}

/**
 * One line per live job (id, state, command, listening addresses, armed wakes), then one per job that
 * exited and whose exit the model has not read (id, exit code, command): it may still need to look.
 */
export function jobsNote(jobs: readonly JobSnapshot[], ended: readonly JobSnapshot[] = []): string {
  const lines = jobs.map((job) => {
    const wakes = [
      ...(job.wakeArmed ? [job.wakeLevel ? `on_exit ${job.wakeLevel}` : "on_exit"] : []),
      ...(job.wakePattern !== undefined ? [`/${oneLine(job.wakePattern, 80)}/`] : []),
    ];
    return [
      `- session_id ${job.jobId}`,
      `running ${shortDuration(job.elapsedMs)}`,
      `\`${oneLine(job.command, 120)}\``,
      ...(job.listening?.length ? [`listening ${addresses(job.listening)}`] : []),
      ...(wakes.length ? [`wakes armed: ${wakes.join(", ")}`] : []),
    ].join(" · ");
  });
  const endedLines = ended.map((job) => `- session_id ${job.jobId} · ${exitWords(job)} · \`${oneLine(job.command, 120)}\``);
  const running =
    "These jobs you started are still running; use their session_id (write_stdin, kill_session) instead of starting them again:";
  const exited = "These jobs you started have exited; you have not read their end yet (write_stdin reads it once):";
  const parts = [...(lines.length ? [running, ...lines] : []), ...(endedLines.length ? [exited, ...endedLines] : [])];
  return `[unified-exec jobs] The conversation was compacted. ${parts.join("\n")}`;
}

export function registerCompactionNote(pi: ExtensionAPI, runtimes: SessionRuntimes): void {
  pi.on("context", (event, ctx) => {
    const runtime = runtimes.existing(ctx.sessionManager);
    if (!runtime) return undefined;
    if (!compactionUnanswered(ctx.sessionManager.getBranch() as readonly BranchEntry[])) return undefined;
    const live = runtime.liveJobs({ ports: true });
    // Registered jobs that have exited are the ones whose exit no result has reported yet; reading their snapshot consumes nothing.
    const ended = runtime
      .jobs()
      .filter((job) => job.exit !== undefined)
      .map((job) => runtime.snapshotOf(job.id))
      .filter((job): job is JobSnapshot => job !== undefined);
    if (live.length === 0 && ended.length === 0) return undefined;
    const messages = [...event.messages];
    // Right after the summary: never between a tool call and its result, and the prompt stays last.
    const summary = messages.findIndex((message) => message.role === "compactionSummary");
    messages.splice(summary + 1, 0, {
      role: "custom",
      customType: JOBS_NOTE_TYPE,
      content: jobsNote(live, ended),
      display: false,
      timestamp: Date.now(),
    });
    return { messages };
  });
}
