import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { KILL_GRACE_MS, KILL_SIGNALS, normalizeSignal } from "../../core/index.ts";
import { checkArguments } from "../arguments.ts";
import { shownPart } from "../results/job-result.ts";
import { type KillDetails, killResult, killResultSchema } from "../results/kill-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { killSessionRenderer } from "../tui/summary-renderers.ts";

export const killSessionParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "The job to stop." }),
    signal: Type.Optional(
      Type.String({
        description: `${KILL_SIGNALS.join(", ")} (default SIGTERM; TERM and sigkill work too). Every signal but SIGKILL is followed by SIGKILL after ${KILL_GRACE_MS / 1000} s if the job is still there.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export function killSessionTool(runtimes: SessionRuntimes): ToolDefinition<typeof killSessionParameters, KillDetails> {
  return {
    name: "kill_session",
    label: "kill_session",
    description:
      `Stops a job and its process group: the signal, then SIGKILL after ${KILL_GRACE_MS / 1000} s if needed. Works while another call waits on ` +
      "the job. Reports the exit, whether it escalated, and cleanup evidence (confirmed only when every process is gone).",
    promptSnippet: "kill_session: stop a job by session_id (SIGTERM, then SIGKILL)",
    promptGuidelines: ["kill_session: stop the jobs you started once they are no longer needed, such as dev servers at the end of a task."],
    parameters: killSessionParameters,
    outputSchema: killResultSchema,
    prepareArguments: (raw) => checkArguments("kill_session", killSessionParameters, raw),
    ...killSessionRenderer,
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      const signal = normalizeSignal(params.signal ?? "SIGTERM");
      // A kill's result is capped like a default-format result (kill-result.ts): the runtime decodes only that much.
      const report = await runtimes
        .runtimeFor(ctx.sessionManager)
        .kill(params.session_id, signal, toolCallId, "model", shownPart("default"));
      return killResult(report);
    },
  };
}
