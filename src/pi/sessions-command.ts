import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { ExecRuntime, LiveJob } from "../core/runtime.ts";
import { jobLabel } from "./jobs-ui.ts";
import { metadata } from "./results/format.ts";
import type { SessionRuntimes } from "./session-runtimes.ts";

export const SESSIONS_COMMAND = "unified-exec-sessions";
export const LISTING_MESSAGE_TYPE = "unified-exec-sessions";

const KILL_ALL = "Kill all";
const CANCEL = "Cancel";
const KILL = "Kill (SIGTERM, then SIGKILL after 2 s)";
const DISARM = "Disarm its wake (the job keeps running)";

/** A kill by the human: the model's next call on the id hears of it (`killed_by: user`) with the unread output. */
async function killJob(runtime: ExecRuntime, job: LiveJob): Promise<string> {
  try {
    const report = await runtime.kill(job.sessionId, "SIGTERM", undefined, "user");
    if (report.failure) return `session ${job.sessionId}: kill failed: ${metadata(report.failure)}`;
    return `session ${job.sessionId}: ${report.exit ? `stopped (exit_code ${report.exit.exitCode})` : "still running after SIGKILL"}, cleanup ${report.cleanup}`;
  } catch (error) {
    return `session ${job.sessionId}: ${metadata((error as Error).message)}`;
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
      const labels = live.map(jobLabel);
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
        const outcome = runtime.setOnExit(job.sessionId, "none");
        ctx.ui.notify(`session ${job.sessionId}: wake ${outcome.found ? outcome.status : "not found"}`, "info");
      }
    },
  });
}
