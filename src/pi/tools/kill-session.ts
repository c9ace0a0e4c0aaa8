import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { KILL_GRACE_MS, KILL_SIGNALS, normalizeSignal } from "../../core/index.ts";
import { checkArguments } from "../arguments.ts";
import { type KillDetails, killResult, killResultSchema } from "../results/kill-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { killSessionRenderer } from "../tui/render.ts";

export const killSessionParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "Job id." }),
    signal: Type.Optional(
      Type.String({
        description: `${KILL_SIGNALS.map((name) => name.slice(3)).join(", ")}; default TERM.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export function killSessionTool(runtimes: SessionRuntimes): ToolDefinition<typeof killSessionParameters, KillDetails> {
  return {
    name: "kill_session",
    label: "kill_session",
    description: `Stop a job you no longer need and its processes (KILL after ${KILL_GRACE_MS / 1000} s).`,
    parameters: killSessionParameters,
    outputSchema: killResultSchema,
    prepareArguments: (raw) => checkArguments("kill_session", killSessionParameters, raw),
    ...killSessionRenderer,
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      const signal = normalizeSignal(params.signal ?? "SIGTERM");
      const report = await runtimes.runtimeFor(ctx.sessionManager).kill(params.session_id, signal, toolCallId, "model");
      return killResult(report, ctx.cwd);
    },
  };
}
