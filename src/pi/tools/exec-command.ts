import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
  DEFAULT_COLS,
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_ROWS,
  DEFAULT_TIMEOUT_S,
  type HostShellSettings,
  MAX_TIMEOUT_S,
  MAX_YIELD_MS,
  MIN_YIELD_MS,
  prepareExec,
  SHELL_NAMES,
} from "../../core/index.ts";
import { checkArguments, checkListening } from "../arguments.ts";
import { ASK_USER_GUIDELINE } from "../guidance/ask-user.ts";
import {
  CONDITIONAL_EXEC_WINDOW,
  UNTIL_LISTENING_DESCRIPTION,
  UNTIL_PATTERN_DESCRIPTION,
  UNTIL_QUIET_MS_DESCRIPTION,
  WAIT_GUIDELINE,
} from "../guidance/conditional-waits.ts";
import { jobHint } from "../guidance/job-hints.ts";
import { EXEC_SCREEN_DESCRIPTION } from "../guidance/screens.ts";
import { WAKE_GUIDELINE, WAKE_ON_PATTERN_DESCRIPTION } from "../guidance/speak-up.ts";
import type { ResultFormatSetting } from "../result-format.ts";
import { completionNote, patternNote } from "../results/job-fields.ts";
import { type JobDetails, jobResult, jobResultSchema, progressResult } from "../results/job-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { execCommandRenderer } from "../tui/render.ts";

/** The conditional waits, the same on both tools. */
export const UNTIL_PARAMETERS = {
  until_pattern: Type.Optional(Type.String({ description: UNTIL_PATTERN_DESCRIPTION })),
  until_quiet_ms: Type.Optional(Type.Integer({ description: UNTIL_QUIET_MS_DESCRIPTION })),
  until_listening: Type.Optional(
    // The port's range and the URL are checked in code (`checkListening`): the schema stays short.
    Type.Union([Type.Boolean(), Type.Integer(), Type.String()], { description: UNTIL_LISTENING_DESCRIPTION }),
  ),
};

/** `max_output_tokens`, the same on both tools. */
export const MAX_OUTPUT_TOKENS = Type.Optional(Type.Integer({ minimum: 1, description: "Output token budget (end kept)." }));

export const execCommandParameters = Type.Object(
  {
    cmd: Type.String({ description: "Shell command." }),
    workdir: Type.Optional(Type.String({ description: "Default: cwd." })),
    shell: Type.Optional(
      Type.Unsafe<(typeof SHELL_NAMES)[number]>({
        type: "string",
        enum: [...SHELL_NAMES],
        description: "Default bash.",
      }),
    ),
    tty: Type.Optional(Type.Boolean({ description: "Pseudo-terminal." })),
    cols: Type.Optional(Type.Number({ description: `Default ${DEFAULT_COLS}.` })),
    rows: Type.Optional(Type.Number({ description: `Default ${DEFAULT_ROWS}.` })),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `Default ${DEFAULT_EXEC_YIELD_MS} (${MIN_YIELD_MS}–${MAX_YIELD_MS}; ${CONDITIONAL_EXEC_WINDOW}); the job runs on.`,
      }),
    ),
    ...UNTIL_PARAMETERS,
    screen: Type.Optional(Type.Boolean({ description: EXEC_SCREEN_DESCRIPTION })),
    on_exit: Type.Optional(
      Type.Unsafe<"none" | "wake" | "next_turn">({
        type: "string",
        enum: ["none", "wake", "next_turn"],
        description: '"wake": a prompt at an unwatched exit; "next_turn": told in your next turn (default "none").',
      }),
    ),
    wake_on_pattern: Type.Optional(Type.String({ description: WAKE_ON_PATTERN_DESCRIPTION })),
    login: Type.Optional(Type.Boolean({ description: "Login shell." })),
    max_output_tokens: MAX_OUTPUT_TOKENS,
    timeout_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TIMEOUT_S,
        description: `Kill after N s (default ${DEFAULT_TIMEOUT_S}).`,
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
    description: "Returns exit_code, or a session_id if still running after yield_time_ms.",
    promptSnippet: "run a shell command as a job; a long one returns a session_id to poll",
    promptGuidelines: [
      "exec_command: tty: true for programs needing a terminal (REPLs, ssh, sudo, TUIs).",
      WAIT_GUIDELINE,
      WAKE_GUIDELINE,
      ASK_USER_GUIDELINE,
    ],
    parameters: execCommandParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkListening(checkArguments("exec_command", execCommandParameters, raw), "Nothing was started."),
    ...execCommandRenderer,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      runtimes.assertNoUnstoppedChildren();
      const request = prepareExec(params, ctx.cwd, process.env, hostSettings());
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
        completion: completionNote(report.wake === "armed" ? (report.wakeLevel ?? "wake") : undefined, ctx.mode, true),
        patternArmed: patternNote(report.job.wakePattern, ctx.mode),
        piCwd: ctx.cwd,
        maxOutputTokens: params.max_output_tokens,
        login: params.login,
        format: format.format,
        hint: jobHint(runtime, report, { plainPoll: false }),
      });
    },
  };
}
