import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
  DEFAULT_COLS,
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_ROWS,
  DEFAULT_TIMEOUT_S,
  type HostShellSettings,
  MAX_COLS,
  MAX_LISTEN_PORT,
  MAX_ROWS,
  MAX_TIMEOUT_S,
  MAX_YIELD_MS,
  MIN_COLS,
  MIN_ROWS,
  MIN_YIELD_MS,
  prepareExec,
  SHELL_NAMES,
} from "../../core/index.ts";
import { checkArguments, checkListening } from "../arguments.ts";
import {
  EXEC_COMMAND_GUIDELINES,
  EXEC_CONDITIONAL_YIELD_NOTE,
  UNTIL_LISTENING_DESCRIPTION,
  UNTIL_PATTERN_DESCRIPTION,
  UNTIL_QUIET_MS_DESCRIPTION,
} from "../guidance/conditional-waits.ts";
import { EXEC_SCREEN_DESCRIPTION, SCREEN_GUIDELINES } from "../guidance/screens.ts";
import { SPEAK_UP_GUIDELINES, WAKE_ON_PATTERN_DESCRIPTION } from "../guidance/speak-up.ts";
import type { ResultFormatSetting } from "../result-format.ts";
import {
  completionNote,
  type JobDetails,
  jobResult,
  jobResultSchema,
  patternNote,
  progressResult,
  shownPart,
} from "../results/job-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { execCommandRenderer } from "../tui/render.ts";

/** `max_output_tokens`, the same on both tools. */
export const MAX_OUTPUT_TOKENS_DESCRIPTION =
  "Codex's output budget for this call, at about 4 bytes a token: the output shown is cut to its last part within it " +
  "(never more than the usual 50 KiB / 2 000 lines; the log keeps everything).";

export const execCommandParameters = Type.Object(
  {
    cmd: Type.String({ description: "Shell command to run." }),
    workdir: Type.Optional(
      Type.String({
        description: "Working directory; relative paths resolve against the current directory. Default: the current directory.",
      }),
    ),
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
    cols: Type.Optional(
      Type.Number({ description: `Terminal width for tty: true (default ${DEFAULT_COLS}, clamped to ${MIN_COLS}–${MAX_COLS}).` }),
    ),
    rows: Type.Optional(
      Type.Number({ description: `Terminal height for tty: true (default ${DEFAULT_ROWS}, clamped to ${MIN_ROWS}–${MAX_ROWS}).` }),
    ),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          `How long this call waits for the command before returning (default ${DEFAULT_EXEC_YIELD_MS}, clamped to ${MIN_YIELD_MS}–${MAX_YIELD_MS}). ` +
          `It returns earlier if the command exits or the user sends a message. Not a timeout: the command keeps running afterwards. ${EXEC_CONDITIONAL_YIELD_NOTE}`,
      }),
    ),
    until_pattern: Type.Optional(Type.String({ description: UNTIL_PATTERN_DESCRIPTION })),
    until_quiet_ms: Type.Optional(Type.Integer({ description: UNTIL_QUIET_MS_DESCRIPTION })),
    until_listening: Type.Optional(
      Type.Union([Type.Boolean(), Type.Integer({ minimum: 1, maximum: MAX_LISTEN_PORT })], { description: UNTIL_LISTENING_DESCRIPTION }),
    ),
    screen: Type.Optional(Type.Boolean({ description: EXEC_SCREEN_DESCRIPTION })),
    on_exit: Type.Optional(
      Type.Unsafe<"none" | "wake">({
        type: "string",
        enum: ["none", "wake"],
        description:
          'What happens when the job exits while no call is watching it. "none" (default): nothing; poll with write_stdin. ' +
          '"wake": one follow-up prompt tells you it finished (use only when the user wants to be told; set_on_exit changes it).',
      }),
    ),
    wake_on_pattern: Type.Optional(Type.String({ description: WAKE_ON_PATTERN_DESCRIPTION })),
    login: Type.Optional(
      Type.Boolean({
        description:
          "Run bash, zsh or sh as a login shell (-l: profile files first), as Codex does. Default: false. Not for cmd or powershell.",
      }),
    ),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, description: MAX_OUTPUT_TOKENS_DESCRIPTION })),
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

export function execCommandTool(
  runtimes: SessionRuntimes,
  hostSettings: () => HostShellSettings,
  format: ResultFormatSetting,
): ToolDefinition<typeof execCommandParameters, JobDetails> {
  return {
    name: "exec_command",
    label: "exec_command",
    description:
      "Runs a shell command as a job (stdout and stderr merged). Waits up to yield_time_ms: if the command exits by then, " +
      "returns its output and exit_code; otherwise returns the output so far and a session_id, and the command keeps running. " +
      "Continue with write_stdin(session_id) to get the output that arrives later and the exit. " +
      "Long output is cut to its end with a footer saying how much was not shown; every byte is in the file at log_path " +
      "(given with the first result, whenever output was cut, and with the exit).",
    promptSnippet: "exec_command: run a shell command as a job; long ones return a session_id to poll with write_stdin",
    promptGuidelines: [
      "exec_command: a command still running when yield_time_ms ends returns a session_id; keep it and poll with write_stdin instead of starting the command again.",
      "exec_command: use tty: true for programs that need a terminal (REPLs, ssh, sudo, TUIs) and submit their input lines with \\r.",
      'exec_command: set on_exit: "wake" only when the user wants to hear when a finite job ends; never for servers, REPLs or watchers.',
      ...EXEC_COMMAND_GUIDELINES,
      ...SCREEN_GUIDELINES,
      ...SPEAK_UP_GUIDELINES,
    ],
    parameters: execCommandParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkListening(checkArguments("exec_command", execCommandParameters, raw), "Nothing was started."),
    ...execCommandRenderer,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      runtimes.assertNoUnstoppedChildren();
      const request = {
        ...prepareExec(params, ctx.cwd, process.env, hostSettings()),
        shown: shownPart(format.format, params.max_output_tokens),
      };
      const runtime = runtimes.runtimeFor(ctx.sessionManager);
      const report = await runtime.exec(request, {
        signal,
        callId: toolCallId,
        onExit: params.on_exit ?? "none",
        ...(onUpdate ? { onProgress: (progress) => onUpdate(progressResult(progress, request.window.ms)) } : {}),
      });
      const notice = [request.shell.notice, runtime.takeNotice(), format.takeResultWarning(ctx.mode)].filter((part) => part !== undefined);
      return jobResult(report, {
        notice: notice.join("; ") || undefined,
        completion: completionNote(report.wake === "armed", ctx.mode),
        patternArmed: patternNote(report.job.wakePattern !== undefined, ctx.mode),
        piCwd: ctx.cwd,
        maxOutputTokens: params.max_output_tokens,
        login: params.login,
        format: format.format,
      });
    },
  };
}
