import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { checkArguments } from "../arguments.ts";
import { type SetOnExitDetails, setOnExitResult, setOnExitResultSchema } from "../results/set-on-exit-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { setOnExitRenderer } from "../tui/summary-renderers.ts";

export const setOnExitParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "The job whose completion wake to change." }),
    on_exit: Type.Unsafe<"none" | "wake">({
      type: "string",
      enum: ["none", "wake"],
      description:
        '"none": no follow-up prompt when it exits (the job keeps running). "wake": one follow-up prompt when it exits unobserved.',
    }),
  },
  { additionalProperties: false },
);

export function setOnExitTool(runtimes: SessionRuntimes): ToolDefinition<typeof setOnExitParameters, SetOnExitDetails> {
  return {
    name: "set_on_exit",
    label: "set_on_exit",
    description:
      "Arms or disarms a job's completion wake without touching the process. Disarm wakes you no longer need (abandoned " +
      "approach, the user changed their mind). Works on a finished job whose wake has not gone out yet.",
    promptSnippet: "set_on_exit: arm or disarm a job's completion wake",
    promptGuidelines: ['set_on_exit: disarm (on_exit: "none") the wake of a job whose result you no longer need.'],
    parameters: setOnExitParameters,
    outputSchema: setOnExitResultSchema,
    prepareArguments: (raw) => checkArguments("set_on_exit", setOnExitParameters, raw),
    ...setOnExitRenderer,
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      return setOnExitResult(
        params.session_id,
        params.on_exit,
        runtimes.runtimeFor(ctx.sessionManager).setOnExit(params.session_id, params.on_exit),
      );
    },
  };
}
