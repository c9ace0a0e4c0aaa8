import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { receiptText } from "./receipt.ts";
import type { SessionRuntimes } from "./session-runtimes.ts";
import type { JobsUi } from "./tui/jobs-ui.ts";
import { closeTypingOverlays } from "./tui/typing-overlay.ts";
import { wakeMessage, wakeSender } from "./wake-message.ts";

export const KEEP_BASH_FLAG = "keep-builtin-bash";

export interface LifecycleParts {
  runtimes: SessionRuntimes;
  ui: JobsUi;
}

/**
 * Session lifecycle and the events the tools rely on:
 * - `session_start` binds this instance (wake delivery, UI) to the session, adopts the runtime a
 *   `/reload` parked, and takes Pi's built-in `bash` out of the active tools unless
 *   `--keep-builtin-bash` says otherwise;
 * - `session_shutdown` parks the runtime for `/reload`, and at any other boundary (new, resume,
 *   fork, quit) drops pending wakes and stops every job's process group; Pi awaits it;
 * - `tool_execution_start` / `_end` tell the runtime's completion ledger which call runs inside which,
 *   and when Pi has finalized a call, the moment its observations of job exits are committed;
 * - `tool_result` appends the receipt of exits seen by nested calls to the enclosing call's result;
 * - `before_agent_start` / `agent_start` begin a run and `agent_settled` ends it: wakes are held
 *   while Pi runs and decided when the run settles (the runtime's one decision point); `agent_settled`
 *   also retries wake sends that threw (a stale API); `before_agent_start` adds the notices still due
 *   (`next_turn` ones above all) to the run's first message;
 * - `session_tree` shows the live jobs above the editor (they survive branch navigation).
 */
export function registerLifecycle(pi: ExtensionAPI, { runtimes, ui }: LifecycleParts): void {
  pi.registerFlag(KEEP_BASH_FLAG, { type: "boolean", default: false, description: "Keep Pi's built-in bash tool next to exec_command" });
  runtimes.onRuntime((runtime) => ui.watch(runtime));

  pi.on("session_start", async (event, ctx) => {
    ui.bind(ctx.ui);
    if (event.reason === "reload") {
      const adoption = runtimes.adopt(ctx.sessionManager);
      if (adoption && "refused" in adoption) {
        await adoption.refused.shutdown();
        ctx.ui.notify(
          `pi-unified-exec: jobs started by an incompatible earlier version (runtime format ${adoption.format}) were stopped at reload.`,
          "warning",
        );
      }
    }
    // Before anything can create the forked session's runtime: it takes over the jobs the fork stopped.
    if (event.reason === "fork") runtimes.forked(ctx.sessionManager);
    // A reload may come while Pi runs: the run then goes on, and its wakes wait for it to settle.
    runtimes.setRunning(!ctx.isIdle());
    runtimes.bind(ctx.sessionManager, wakeSender(pi));
    if (!pi.getFlag(KEEP_BASH_FLAG)) pi.setActiveTools(pi.getActiveTools().filter((name) => name !== "bash"));
  });

  pi.on("session_shutdown", async (event, ctx) => {
    ui.unbind();
    // Pi drops open overlays at a boundary or reload without ending them: end the typing they hold.
    closeTypingOverlays();
    runtimes.existing(ctx.sessionManager)?.completions.forgetCalls();
    if (event.reason === "reload") {
      runtimes.park(ctx.sessionManager);
      return;
    }
    const report = await runtimes.end(ctx.sessionManager, { reason: event.reason, targetSessionFile: event.targetSessionFile });
    if (!report) return;
    const problems = [...report.errors];
    if (report.survivors.length > 0) problems.push(`process groups still alive after SIGKILL: ${report.survivors.join(", ")}`);
    // Thrown so Pi reports it: a child that outlives the session must never go unnoticed.
    if (problems.length > 0) throw new Error(`pi-unified-exec could not stop every job: ${problems.join("; ")}`);
  });

  pi.on("session_tree", () => {
    ui.showWidget();
  });
  registerCallEvents(pi, runtimes);
}

/** The events exactly-once completion follows: which call runs inside which, when Pi finalized one. */
function registerCallEvents(pi: ExtensionAPI, runtimes: SessionRuntimes): void {
  // A message the user typed while the agent works, delivered as a steer: every wait of ours ends now
  // with the output so far, so the model reads it at once. Pi awaits this handler: it only signals.
  pi.on("input", (event, ctx) => {
    if (event.streamingBehavior === "steer") runtimes.existing(ctx.sessionManager)?.steer();
    return undefined;
  });

  pi.on("tool_execution_start", (event, ctx) => {
    // Only nesting needs remembering; a runtime costs nothing until its first job.
    if (event.parentToolCallId) runtimes.runtimeFor(ctx.sessionManager).completions.callStarted(event.toolCallId, event.parentToolCallId);
  });

  pi.on("tool_execution_end", (event, ctx) => {
    runtimes.existing(ctx.sessionManager)?.completions.callEnded(event.toolCallId, event.isError);
  });

  pi.on("tool_result", (event, ctx) => {
    const receipt = runtimes.existing(ctx.sessionManager)?.completions.receipt(event.toolCallId);
    if (!receipt) return undefined;
    // Returned whole: Pi drops structuredContent and details from a handler result that omits them.
    return {
      content: [...event.content, { type: "text" as const, text: `\n${receiptText(receipt)}` }],
      details: event.details,
      ...(event.structuredContent !== undefined ? { structuredContent: event.structuredContent } : {}),
    };
  });

  // A run begins (a user's prompt, a wake's turn): what is due rides with it, re-checked now (Pi's own
  // nextTurn queue could not be withdrawn); from here until it settles, no wake enters Pi's queue.
  pi.on("before_agent_start", () => {
    const batch = runtimes.runStarting();
    return batch ? { message: wakeMessage(batch) } : undefined;
  });
  pi.on("agent_start", () => {
    runtimes.setRunning(true);
  });
  // The one decision point: Pi is idle, so what is still due goes out now (a turn it starts waits
  // for the handlers to finish).
  pi.on("agent_settled", () => {
    runtimes.setRunning(false);
  });
}
