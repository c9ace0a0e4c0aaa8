import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { checkArguments } from "../arguments.ts";
import { type ListDetails, listResult, listResultSchema } from "../results/list-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { listSessionsRenderer } from "../tui/render.ts";

export const listSessionsParameters = Type.Object({}, { additionalProperties: false });

export function listSessionsTool(runtimes: SessionRuntimes): ToolDefinition<typeof listSessionsParameters, ListDetails> {
  return {
    name: "list_sessions",
    label: "list_sessions",
    description: "List jobs; check before starting a server.",
    parameters: listSessionsParameters,
    outputSchema: listResultSchema,
    prepareArguments: (raw) => checkArguments("list_sessions", listSessionsParameters, raw ?? {}),
    ...listSessionsRenderer,
    async execute(toolCallId, _params, _signal, _onUpdate, ctx) {
      const runtime = runtimes.runtimeFor(ctx.sessionManager);
      return listResult(runtime.list(toolCallId), new Date(), runtime.completions.heldByBudget);
    },
  };
}
