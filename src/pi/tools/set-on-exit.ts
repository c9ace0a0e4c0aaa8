import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { compileWakePattern, ExecRequestError } from "../../core/index.ts";
import { checkArguments } from "../arguments.ts";
import { SET_WAKE_ON_PATTERN_DESCRIPTION } from "../guidance/speak-up.ts";
import { type SetOnExitDetails, setOnExitResult, setOnExitResultSchema } from "../results/set-on-exit-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { setOnExitRenderer } from "../tui/summary-renderers.ts";

export const setOnExitParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "The job whose wakes to change." }),
    on_exit: Type.Optional(
      Type.Unsafe<"none" | "wake">({
        type: "string",
        enum: ["none", "wake"],
        description:
          '"none": no follow-up prompt when it exits (the job keeps running). "wake": one follow-up prompt when it exits unobserved.',
      }),
    ),
    wake_on_pattern: Type.Optional(Type.String({ description: SET_WAKE_ON_PATTERN_DESCRIPTION })),
  },
  { additionalProperties: false },
);

export function setOnExitTool(runtimes: SessionRuntimes): ToolDefinition<typeof setOnExitParameters, SetOnExitDetails> {
  return {
    name: "set_on_exit",
    label: "set_on_exit",
    description:
      "Arms or disarms a job's wakes without touching the process: its completion wake (on_exit) and its wake_on_pattern. " +
      "Give on_exit, wake_on_pattern or both. Disarm wakes you no longer need (abandoned approach, the user changed their mind). " +
      "on_exit works on a finished job whose wake has not gone out yet.",
    promptSnippet: "set_on_exit: arm or disarm a job's completion wake and its wake_on_pattern",
    promptGuidelines: ['set_on_exit: disarm (on_exit: "none", wake_on_pattern: "") the wakes of a job whose news you no longer need.'],
    parameters: setOnExitParameters,
    outputSchema: setOnExitResultSchema,
    prepareArguments: (raw) => checkArguments("set_on_exit", setOnExitParameters, raw),
    ...setOnExitRenderer,
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      if (params.on_exit === undefined && params.wake_on_pattern === undefined) {
        throw new ExecRequestError(
          'set_on_exit needs on_exit ("none" or "wake"), wake_on_pattern (a regular expression, or "" to disarm it), or both. Nothing was changed.',
        );
      }
      const pattern = params.wake_on_pattern;
      // Checked before anything changes: a bad pattern leaves both wakes as they were.
      const compiled = pattern ? compileWakePattern(pattern, "Nothing was changed.") : undefined;
      const change = {
        ...(params.on_exit ? { onExit: params.on_exit } : {}),
        ...(pattern !== undefined ? { wakePattern: compiled ?? null } : {}),
      };
      const outcome = runtimes.runtimeFor(ctx.sessionManager).setOnExit(params.session_id, change);
      return setOnExitResult(params.session_id, { onExit: params.on_exit, wakeOnPattern: pattern }, outcome, ctx.mode);
    },
  };
}
