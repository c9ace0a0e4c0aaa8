import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { checkArguments } from "../arguments.ts";
import { type ListDetails, listResult, listResultSchema } from "../results/list-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { listSessionsRenderer } from "../tui/summary-renderers.ts";

export const listSessionsParameters = Type.Object({}, { additionalProperties: false });

export function listSessionsTool(runtimes: SessionRuntimes): ToolDefinition<typeof listSessionsParameters, ListDetails> {
  return {
    name: "list_sessions",
    label: "list_sessions",
    description:
      "Lists every job: id, command, state (running, or exited with its exit code), elapsed time, quiet time, output size, " +
      "log path and time left before its deadline, plus the host's current UTC time. An exited job is listed once more, then " +
      "forgotten.",
    promptSnippet: "list_sessions: see every job and its state",
    parameters: listSessionsParameters,
    outputSchema: listResultSchema,
    prepareArguments: (raw) => checkArguments("list_sessions", listSessionsParameters, raw ?? {}),
    ...listSessionsRenderer,
    async execute(toolCallId, _params, _signal, _onUpdate, ctx) {
      return listResult(runtimes.runtimeFor(ctx.sessionManager).list(toolCallId));
    },
  };
}
