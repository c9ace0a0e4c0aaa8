import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { compileWakePattern, ExecRequestError } from "../../core/index.ts";
import { checkArguments } from "../arguments.ts";
import { SET_WAKE_ON_PATTERN_DESCRIPTION } from "../guidance/speak-up.ts";
import { type SetOnExitDetails, setOnExitResult, setOnExitResultSchema } from "../results/set-on-exit-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { setOnExitRenderer } from "../tui/render.ts";

export const setOnExitParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "Job id." }),
    on_exit: Type.Optional(
      Type.Unsafe<"none" | "wake" | "next_turn">({
        type: "string",
        enum: ["none", "wake", "next_turn"],
        description: "As exec_command's.",
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
    description: "Arm or disarm a job's wakes (disarm unneeded ones). too_late: already exited.",
    parameters: setOnExitParameters,
    outputSchema: setOnExitResultSchema,
    prepareArguments: (raw) => checkArguments("set_on_exit", setOnExitParameters, raw),
    ...setOnExitRenderer,
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      if (params.on_exit === undefined && params.wake_on_pattern === undefined) {
        throw new ExecRequestError(
          'set_on_exit needs on_exit ("none", "wake" or "next_turn"), wake_on_pattern (a regular expression, or "" to disarm it), or both. Nothing was changed.',
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
