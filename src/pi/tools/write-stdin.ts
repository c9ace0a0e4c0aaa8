import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { MAX_EMPTY_POLL_MS, MIN_EMPTY_POLL_MS } from "../../core/constants.ts";
import { emptyPollWindow } from "../../core/wait-policy.ts";
import { checkArguments } from "../arguments.ts";
import { type JobDetails, jobResult, jobResultSchema } from "../result.ts";
import type { RuntimeSlot } from "../runtime-slot.ts";

export const writeStdinParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "The session_id an earlier exec_command returned." }),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `How long to wait for the job (clamped to ${MIN_EMPTY_POLL_MS}–${MAX_EMPTY_POLL_MS}; more is refused). Returns earlier only if the job exits.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export function writeStdinTool(slot: RuntimeSlot): ToolDefinition<typeof writeStdinParameters, JobDetails> {
  return {
    name: "write_stdin",
    label: "write_stdin",
    description:
      "Polls a job started by exec_command: waits up to yield_time_ms for it to exit, then returns the output that arrived " +
      "since the previous call and, once the job has exited, its exit_code. An exit is reported once; after that the " +
      "session_id is unknown.",
    promptSnippet: "write_stdin: poll a running job by session_id for new output and its exit",
    parameters: writeStdinParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkArguments("write_stdin", writeStdinParameters, raw),
    async execute(_toolCallId, params, signal) {
      const window = emptyPollWindow(params.yield_time_ms, process.env);
      return jobResult(await slot.current().poll(params.session_id, window, signal));
    },
  };
}
