import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { type ExecRuntime, type JobSnapshot, KILL_GRACE_MS } from "../../core/index.ts";
import { metadata, oneLine } from "../results/format.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { letPersonType } from "./ask-person.ts";
import { showJobView } from "./job-view.ts";
import { jobLabel } from "./jobs-ui.ts";

export const SESSIONS_COMMAND = "unified-exec-sessions";
export const LISTING_MESSAGE_TYPE = "unified-exec-sessions";

const KILL_ALL = "Kill all";
const CANCEL = "Cancel";
const KILL = `Kill (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`;
const DISARM = "Disarm its wake (the job keeps running)";
const DISARM_PATTERN = "Disarm its wake_on_pattern (the job keeps running)";
const TYPE = "Type into it (your keys go to the job; the model sees only how many)";
const VIEW_SCREEN = "View its screen";
const VIEW_OUTPUT = "View the last lines of its output";

/** A kill by the human: the model's next call on the id hears of it (`killed_by: user`) with the unread output. */
async function killJob(runtime: ExecRuntime, job: JobSnapshot): Promise<string> {
  try {
    const { job: after, termination } = await runtime.kill(job.jobId, "SIGTERM", undefined, "user");
    if (termination.failure) return `session ${job.jobId}: kill failed: ${metadata(termination.failure)}`;
    const outcome = after.exit ? `stopped (exit_code ${after.exit.exitCode})` : "still running after SIGKILL";
    return `session ${job.jobId}: ${outcome}, cleanup ${termination.cleanup}`;
  } catch (error) {
    return `session ${job.jobId}: ${metadata((error as Error).message)}`;
  }
}

/**
 * "Type into it": the person takes the job's keyboard (the overlay on a PTY in Pi's TUI, a line
 * elsewhere); the model's next result on the job says how many bytes, never which. Returns what to
 * tell the person afterwards — a count, never what they typed.
 */
async function typeInto(ctx: ExtensionCommandContext, runtime: ExecRuntime, job: JobSnapshot): Promise<string> {
  const taken = runtime.typeInto(job.jobId);
  if ("refused" in taken) {
    if (taken.refused === "typing") return `Someone is already typing into session ${job.jobId}.`;
    return `Session ${job.jobId} has already ended; there is nothing to type into.`;
  }
  let cancelled = true;
  try {
    cancelled = await letPersonType(ctx, taken.job, taken.typing, `session ${job.jobId}: \`${oneLine(job.command, 120)}\``);
  } finally {
    taken.typing.end(cancelled);
  }
  const bytes = taken.typing.bytes;
  return bytes === 0
    ? `» nothing was typed into session ${job.jobId}`
    : `» you typed ${bytes} byte${bytes === 1 ? "" : "s"} into session ${job.jobId}`;
}

/**
 * `/unified-exec-sessions`: the human's way to look at jobs, stop them or disarm wakes without the
 * model. "View" shows a job's screen or the last lines of its output and consumes nothing; the kill is
 * the same (escalation, wake suppression) as `kill_session`. Without a UI (print, JSON) it posts the
 * listing as a message that does not start a turn: there is no picker to view from.
 */
export function registerSessionsCommand(pi: ExtensionAPI, runtimes: SessionRuntimes): void {
  pi.registerCommand(SESSIONS_COMMAND, {
    description: "List running unified-exec jobs; view one's screen or output, kill one or all, or disarm a wake",
    handler: async (_args: string, ctx: ExtensionCommandContext) => {
      const runtime = runtimes.existing(ctx.sessionManager);
      const live = runtime?.liveJobs({ ports: true }) ?? [];
      if (!ctx.hasUI) {
        const text = live.length
          ? ["unified-exec sessions running:", ...live.map((job) => `- ${jobLabel(job)}`)].join("\n")
          : "No unified-exec sessions are running.";
        pi.sendMessage({ customType: LISTING_MESSAGE_TYPE, content: text, display: true }, { triggerTurn: false });
        return;
      }
      if (!runtime || live.length === 0) {
        ctx.ui.notify("No unified-exec sessions are running.", "info");
        return;
      }
      const labels = live.map((job) => jobLabel(job));
      const choice = await ctx.ui.select("unified-exec sessions", [...labels, KILL_ALL, CANCEL]);
      if (choice === undefined || choice === CANCEL) return;
      if (choice === KILL_ALL) {
        const results = await Promise.all(live.map((job) => killJob(runtime, job)));
        ctx.ui.notify(results.join("\n"), "info");
        return;
      }
      const job = live[labels.indexOf(choice)];
      if (!job) return;
      const view = job.tty ? VIEW_SCREEN : VIEW_OUTPUT;
      const disarms = [...(job.wakeArmed ? [DISARM] : []), ...(job.wakePattern !== undefined ? [DISARM_PATTERN] : [])];
      const action = await ctx.ui.select(jobLabel(job), [KILL, view, TYPE, ...disarms, CANCEL]);
      if (action === TYPE) ctx.ui.notify(await typeInto(ctx, runtime, job), "info");
      if (action === view) {
        const target = runtime.jobs().find((candidate) => candidate.id === job.jobId);
        if (target) await showJobView(ctx, target, job);
        else ctx.ui.notify(`session ${job.jobId} is no longer there: its exit was reported meanwhile`, "info");
      }
      if (action === KILL) ctx.ui.notify(await killJob(runtime, job), "info");
      if (action === DISARM) {
        const outcome = runtime.setOnExit(job.jobId, { onExit: "none" });
        ctx.ui.notify(`session ${job.jobId}: wake ${outcome.found ? outcome.onExit : "not found"}`, "info");
      }
      if (action === DISARM_PATTERN) {
        const outcome = runtime.setOnExit(job.jobId, { wakePattern: null });
        ctx.ui.notify(`session ${job.jobId}: wake_on_pattern ${outcome.found ? outcome.pattern : "not found"}`, "info");
      }
    },
  });
}
