import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { type ExecRuntime, type JobSnapshot, KILL_GRACE_MS } from "../core/index.ts";
import { jobLabel } from "./jobs-ui.ts";
import { metadata } from "./results/format.ts";
import type { SessionRuntimes } from "./session-runtimes.ts";

export const SESSIONS_COMMAND = "unified-exec-sessions";
export const LISTING_MESSAGE_TYPE = "unified-exec-sessions";

const KILL_ALL = "Kill all";
const CANCEL = "Cancel";
const KILL = `Kill (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`;
const DISARM = "Disarm its wake (the job keeps running)";

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
 * `/unified-exec-sessions`: the human's way to stop jobs or disarm wakes without the model. It uses
 * the same kill (escalation, wake suppression) as `kill_session`. Without a UI (print, JSON) it posts
 * the listing as a message that does not start a turn.
 */
export function registerSessionsCommand(pi: ExtensionAPI, runtimes: SessionRuntimes): void {
  pi.registerCommand(SESSIONS_COMMAND, {
    description: "List running unified-exec jobs; kill one or all, or disarm a wake",
    handler: async (_args: string, ctx: ExtensionCommandContext) => {
      const runtime = runtimes.existing(ctx.sessionManager);
      const live = runtime?.liveJobs() ?? [];
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
      const action = await ctx.ui.select(jobLabel(job), [KILL, ...(job.wakeArmed ? [DISARM] : []), CANCEL]);
      if (action === KILL) ctx.ui.notify(await killJob(runtime, job), "info");
      if (action === DISARM) {
        const outcome = runtime.setOnExit(job.jobId, "none");
        ctx.ui.notify(`session ${job.jobId}: wake ${outcome.found ? outcome.status : "not found"}`, "info");
      }
    },
  });
}
