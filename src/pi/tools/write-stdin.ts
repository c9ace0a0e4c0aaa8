import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import {
  DEFAULT_WRITE_YIELD_MS,
  ExecRequestError,
  emptyPollCapMs,
  LONG_WAIT_UPDATE_MS,
  MAX_COLS,
  MAX_LISTEN_PORT,
  MAX_ROWS,
  MAX_YIELD_MS,
  MIN_COLS,
  MIN_EMPTY_POLL_MS,
  MIN_ROWS,
  MIN_YIELD_MS,
  prepareWrite,
  UnknownJobError,
} from "../../core/index.ts";
import { checkArguments, checkListening } from "../arguments.ts";
import { ASK_USER_DESCRIPTION, ASK_USER_GUIDELINES } from "../guidance/ask-user.ts";
import {
  UNTIL_LISTENING_DESCRIPTION,
  UNTIL_PATTERN_DESCRIPTION,
  UNTIL_QUIET_MS_DESCRIPTION,
  WRITE_STDIN_GUIDELINES,
  YIELD_UNTIL_PATTERN_NOTE,
} from "../guidance/conditional-waits.ts";
import { WRITE_SCREEN_DESCRIPTION } from "../guidance/screens.ts";
import type { ResultFormatSetting } from "../result-format.ts";
import { codexUnknownJobError } from "../results/codex-text.ts";
import { completionNote, type JobDetails, jobResult, jobResultSchema, progressResult, shownPart } from "../results/job-result.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { personAsker } from "../tui/ask-person.ts";
import { writeStdinRenderer } from "../tui/render.ts";
import { MAX_OUTPUT_TOKENS_DESCRIPTION } from "./exec-command.ts";

export const writeStdinParameters = Type.Object(
  {
    session_id: Type.Integer({ minimum: 1, description: "The session_id an earlier exec_command returned." }),
    chars: Type.Optional(
      Type.String({
        description:
          "Text to write to the job's stdin, with C-style escapes: \\n \\r \\t \\e \\xHH (one raw byte) \\uHHHH \\u{H…} \\\\. " +
          'Empty: just poll. Exactly "\\x03" interrupts the job (SIGINT); exactly "\\x04" closes its stdin (EOF).',
      }),
    ),
    chars_b64: Type.Optional(Type.String({ description: "Raw bytes to write, base64-encoded (binary-safe). Not together with chars." })),
    cols: Type.Optional(
      Type.Number({ description: `tty sessions only: resize the terminal to this width first (${MIN_COLS}–${MAX_COLS}).` }),
    ),
    rows: Type.Optional(
      Type.Number({ description: `tty sessions only: resize the terminal to this height first (${MIN_ROWS}–${MAX_ROWS}).` }),
    ),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          `How long to stay attached. With input or a resize: default ${DEFAULT_WRITE_YIELD_MS}, clamped to ${MIN_YIELD_MS}–${MAX_YIELD_MS}. ` +
          `Empty poll: clamped to ${MIN_EMPTY_POLL_MS}–${emptyPollCapMs(process.env)}; more is refused. Returns earlier if the job exits, ` +
          "a condition below is met, or the user sends a message.",
      }),
    ),
    yield_until: Type.Optional(
      Type.String({
        description:
          "Empty poll only, instead of yield_time_ms, and only when the user asks for a long wait on a job that ends by itself: " +
          "stay attached until this UTC time (2026-07-21T18:30:00Z) or the exit, whichever is first. Never for REPLs, servers, " +
          `watchers or prompts. ${YIELD_UNTIL_PATTERN_NOTE}`,
      }),
    ),
    until_pattern: Type.Optional(Type.String({ description: UNTIL_PATTERN_DESCRIPTION })),
    until_quiet_ms: Type.Optional(Type.Integer({ description: UNTIL_QUIET_MS_DESCRIPTION })),
    until_listening: Type.Optional(
      Type.Union([Type.Boolean(), Type.Integer({ minimum: 1, maximum: MAX_LISTEN_PORT })], { description: UNTIL_LISTENING_DESCRIPTION }),
    ),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, description: MAX_OUTPUT_TOKENS_DESCRIPTION })),
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
    description:
      "Writes to a job started by exec_command, or polls it when chars is empty. Stays attached up to yield_time_ms, then " +
      "returns the output that arrived since the previous call and, once the job has exited, its exit_code. An exit is " +
      "reported once; after that the session_id is unknown.",
    promptSnippet: "write_stdin: send input to a running job, or poll it, by session_id",
    promptGuidelines: [
      `write_stdin: to wait for a job, poll with yield_time_ms of at most ${emptyPollCapMs(process.env)} and poll again as needed.`,
      "write_stdin: use yield_until only when the user asks for a long wait on a job that ends by itself; never for REPLs, servers, watchers or prompts.",
      'write_stdin: chars "\\x03" interrupts the job and "\\x04" ends its input.',
      ...WRITE_STDIN_GUIDELINES,
      ...ASK_USER_GUIDELINES,
    ],
    parameters: writeStdinParameters,
    outputSchema: jobResultSchema,
    prepareArguments: (raw) => checkListening(checkArguments("write_stdin", writeStdinParameters, raw), "Nothing was written."),
    ...writeStdinRenderer,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const request = { ...prepareWrite(params, process.env), shown: shownPart(format.format, params.max_output_tokens) };
      const ask = personAsker(ctx);
      if (request.askUser && !ask) {
        throw new ExecRequestError(
          "ask_user needs Pi's interactive terminal or an RPC client to ask a person; this is a print/JSON run. Nothing was asked or written: " +
            "tell the user what to type and let them run the command themselves.",
        );
      }
      const report = await runtimes
        .runtimeFor(ctx.sessionManager)
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
        completion: completionNote(report.wake === "armed", ctx.mode),
        piCwd: ctx.cwd,
        resized: params.cols !== undefined || params.rows !== undefined,
        maxOutputTokens: params.max_output_tokens,
        format: format.format,
      });
    },
  };
}
