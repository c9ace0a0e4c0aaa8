import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { checkArguments } from "../arguments.ts";
import { type ListDetails, listResult, listResultSchema } from "../results/list-result.ts";
import type { RuntimeSlot } from "../runtime-slot.ts";

export const listSessionsParameters = Type.Object({}, { additionalProperties: false });

export function listSessionsTool(slot: RuntimeSlot): ToolDefinition<typeof listSessionsParameters, ListDetails> {
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
    async execute() {
      return listResult(slot.current().list());
    },
  };
}
