import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
  DEFAULT_COLS,
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_ROWS,
  DEFAULT_TIMEOUT_S,
  MAX_COLS,
  MAX_ROWS,
  MAX_TIMEOUT_S,
  MAX_YIELD_MS,
  MIN_COLS,
  MIN_ROWS,
  MIN_YIELD_MS,
} from "../../core/constants.ts";
import { type HostShellSettings, prepareExec } from "../../core/request.ts";
import { SHELL_NAMES } from "../../core/shell.ts";
import { checkArguments } from "../arguments.ts";
import { type JobDetails, jobResult, jobResultSchema } from "../results/job-result.ts";
import type { RuntimeSlot } from "../runtime-slot.ts";

export const execCommandParameters = Type.Object(
  {
    cmd: Type.String({ description: "Shell command to run." }),
    workdir: Type.Optional(Type.String({ description: "Working directory; relative paths resolve against the current directory. Default: the current directory." })),
    shell: Type.Optional(
      Type.Unsafe<(typeof SHELL_NAMES)[number]>({
        type: "string",
        enum: [...SHELL_NAMES],
        description: "Shell that runs cmd. Default: bash (on Windows: Git Bash if found, else powershell).",
      }),
    ),
    tty: Type.Optional(
      Type.Boolean({ description: "Run on a pseudo-terminal: for REPLs, password prompts, ssh, TUIs. Default: false (plain pipes)." }),
    ),
    cols: Type.Optional(Type.Number({ description: `Terminal width for tty: true (default ${DEFAULT_COLS}, clamped to ${MIN_COLS}–${MAX_COLS}).` })),
    rows: Type.Optional(Type.Number({ description: `Terminal height for tty: true (default ${DEFAULT_ROWS}, clamped to ${MIN_ROWS}–${MAX_ROWS}).` })),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `How long this call waits for the command before returning (default ${DEFAULT_EXEC_YIELD_MS}, clamped to ${MIN_YIELD_MS}–${MAX_YIELD_MS}). It returns earlier only if the command exits. Not a timeout: the command keeps running afterwards.`,
      }),
    ),
    timeout_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TIMEOUT_S,
        description: `Hard limit on the command's run time in seconds (default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S}). At the limit the command is stopped (SIGTERM, then SIGKILL) and reported with timed_out: true.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export function execCommandTool(slot: RuntimeSlot, hostSettings: () => HostShellSettings): ToolDefinition<typeof execCommandParameters, JobDetails> {
  return {
    name: "exec_command",
    label: "exec_command",
    description:
      "Runs a shell command as a job (stdout and stderr merged). Waits up to yield_time_ms: if the command exits by then, " +
      "returns its output and exit_code; otherwise returns the output so far and a session_id, and the command keeps running. " +
      "Continue with write_stdin(session_id) to get the output that arrives later and the exit.",
    promptSnippet: "exec_command: run a shell command as a job; long ones return a session_id to poll with write_stdin",
    parameters: execCommandParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkArguments("exec_command", execCommandParameters, raw),
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      const request = prepareExec(params, ctx.cwd, process.env, hostSettings());
      return jobResult(await slot.current().exec(request, signal), request.shell.notice);
    },
  };
}
