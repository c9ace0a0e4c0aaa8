import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
  DEFAULT_CONDITIONAL_WRITE_YIELD_MS,
  DEFAULT_WRITE_YIELD_MS,
  ExecRequestError,
  emptyPollCapMs,
  MAX_YIELD_MS,
  MIN_EMPTY_POLL_MS,
  prepareWrite,
  UnknownJobError,
} from "../../core/index.ts";
import { checkArguments, checkListening } from "../arguments.ts";
import { ASK_USER_DESCRIPTION } from "../guidance/ask-user.ts";
import { jobHint } from "../guidance/job-hints.ts";
import { WRITE_SCREEN_DESCRIPTION } from "../guidance/screens.ts";
import type { ResultFormatSetting } from "../result-format.ts";
import { codexUnknownJobError } from "../results/codex.ts";
import { completionNote } from "../results/job-fields.ts";
import { type JobDetails, jobResult, jobResultSchema, progressResult } from "../results/job-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { LONG_WAIT_UPDATE_MS, writeStdinRenderer } from "../tui/render.ts";
import { personAsker } from "../tui/typing-overlay.ts";
import { MAX_OUTPUT_TOKENS, UNTIL_PARAMETERS } from "./exec-command.ts";

export const writeStdinParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "From exec_command." }),
    chars: Type.Optional(
      Type.String({
        description: 'Input (C escapes, \\xHH); "\\x03" interrupts, "\\x04" is EOF; empty polls.',
      }),
    ),
    chars_b64: Type.Optional(Type.String({ description: "Base64 bytes, instead of chars." })),
    cols: Type.Optional(Type.Number({ description: "Resize tty." })),
    rows: Type.Optional(Type.Number({ description: "Resize tty." })),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          `Default: input ${DEFAULT_WRITE_YIELD_MS}, poll ${MIN_EMPTY_POLL_MS}, until_* ${DEFAULT_CONDITIONAL_WRITE_YIELD_MS}; ` +
          `max ${MAX_YIELD_MS} (poll ${emptyPollCapMs(process.env)}).`,
      }),
    ),
    yield_until: Type.Optional(
      Type.String({ description: "Poll until this RFC 3339 UTC time or exit; not for REPLs, servers, watchers, prompts." }),
    ),
    ...UNTIL_PARAMETERS,
    max_output_tokens: MAX_OUTPUT_TOKENS,
    screen: Type.Optional(Type.Boolean({ description: WRITE_SCREEN_DESCRIPTION })),
    ask_user: Type.Optional(Type.String({ description: ASK_USER_DESCRIPTION })),
  },
  { additionalProperties: false },
);

export function writeStdinTool(
  runtimes: SessionRuntimes,
  format: ResultFormatSetting,
): ToolDefinition<typeof writeStdinParameters, JobDetails> {
  return {
    name: "write_stdin",
    label: "write_stdin",
    description: "Write to a job or poll it; returns new output, and exit_code once (then the id is gone).",
    parameters: writeStdinParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkListening(checkArguments("write_stdin", writeStdinParameters, raw), "Nothing was written."),
    ...writeStdinRenderer,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const request = prepareWrite(params, process.env);
      const ask = personAsker(ctx);
      if (request.askUser && !ask) {
        throw new ExecRequestError(
          "ask_user needs Pi's interactive terminal or an RPC client to ask a person; this is a print/JSON run. Nothing was asked or written: " +
            "tell the user what to type and let them run the command themselves.",
        );
      }
      const runtime = runtimes.runtimeFor(ctx.sessionManager);
      const report = await runtime
        .interact(request, {
          signal,
          callId: toolCallId,
          ...(ask ? { ask } : {}),
          ...(onUpdate ? { onProgress: (progress) => onUpdate(progressResult(progress, request.window.ms, request.absoluteUntil)) } : {}),
          // An absolute wait may last hours: when quiet, refresh the UI every 30 s, never every 250 ms.
          ...(request.absoluteUntil ? { quietRefreshMs: LONG_WAIT_UPDATE_MS } : {}),
        })
        .catch((error: unknown) => {
          // A model trained on Codex knows Codex's words for an id that names nothing.
          if (format.format === "codex" && error instanceof UnknownJobError) throw new Error(codexUnknownJobError(error.jobId));
          throw error;
        });
      return jobResult(report, {
        absoluteUntil: request.absoluteUntil,
        completion: completionNote(report.wake === "armed" ? (report.wakeLevel ?? "wake") : undefined, ctx.mode),
        piCwd: ctx.cwd,
        resized: params.cols !== undefined || params.rows !== undefined,
        maxOutputTokens: params.max_output_tokens,
        format: format.format,
        hint: jobHint(runtime, report, { plainPoll: isPlainPoll(request) }),
      });
    },
  };
}

/** A poll that only waits out its window: no input, resize, condition, absolute wait or `ask_user`. */
function isPlainPoll(request: ReturnType<typeof prepareWrite>): boolean {
  return !request.input && !request.resize && !request.until && !request.absoluteUntil && !request.askUser;
}
