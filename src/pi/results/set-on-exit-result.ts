import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { DisarmedWake, PatternStatus, SetOnExitStatus, WakeChangeResult } from "../../core/index.ts";
import { headerLines, metadata } from "./format.ts";
import { userNewsFields, userNewsSchema } from "./job-fields.ts";

/** Result of `set_on_exit`: what became of the job's exit wake and of its pattern. */

const PATTERN_STATUS = [Type.Literal("disarmed"), Type.Literal("already_none"), Type.Literal("armed"), Type.Literal("too_late")];
/** A pattern is replaced when armed again, so only the exit wake can be `already_armed`. */
const STATUS = Type.Union([...PATTERN_STATUS, Type.Literal("already_armed")]);

export const setOnExitResultSchema = Type.Object({
  session_id: Type.Integer(),
  found: Type.Boolean(),
  on_exit: Type.Optional(Type.Union([Type.Literal("none"), Type.Literal("wake"), Type.Literal("next_turn")])),
  status: Type.Optional(STATUS),
  wake_on_pattern: Type.Optional(Type.String({ description: 'The pattern as given; "" disarms it.' })),
  wake_on_pattern_status: Type.Optional(Type.Union(PATTERN_STATUS)),
  ...userNewsSchema,
});

export interface SetOnExitDetails {
  session_id: number;
  found: boolean;
  on_exit?: "none" | "wake" | "next_turn";
  status?: SetOnExitStatus;
  wake_on_pattern?: string;
  wake_on_pattern_status?: PatternStatus;
  user_input?: string;
  user_disarmed?: DisarmedWake[];
}

const MEANING: Record<SetOnExitStatus, string> = {
  disarmed: "no wake will follow; the job keeps running (or stays readable) as before",
  already_none: "no wake was armed",
  armed: "one follow-up prompt will announce the exit if nothing observes it",
  already_armed: "the wake was armed already, at this level",
  too_late: "the job has already exited or its wake was already sent; that cannot be changed now",
};

const PATTERN_MEANING: Record<PatternStatus, string> = {
  disarmed: "no line will wake you any more",
  already_none: "no pattern was armed",
  armed: "a later output line that matches wakes you (one prompt, then a cooldown)",
  too_late: "the job has already exited: no line will come",
};

/** What the model asked to change. */
export interface WakeChangeRequest {
  onExit?: "none" | "wake" | "next_turn" | undefined;
  wakeOnPattern?: string | undefined;
}

export function setOnExitResult(
  sessionId: number,
  asked: WakeChangeRequest,
  outcome: WakeChangeResult,
  /** Pi's mode: a print/JSON run ends before a later wake could arrive. */
  mode = "tui",
): AgentToolResult<SetOnExitDetails> {
  const found = outcome.found ? outcome : undefined;
  const details: SetOnExitDetails = {
    session_id: sessionId,
    found: outcome.found,
    ...(asked.onExit ? { on_exit: asked.onExit } : {}),
    ...(found?.onExit ? { status: found.onExit } : {}),
    ...(asked.wakeOnPattern !== undefined ? { wake_on_pattern: metadata(asked.wakeOnPattern) } : {}),
    ...(found?.pattern ? { wake_on_pattern_status: found.pattern } : {}),
    ...(found ? userNewsFields(found) : {}),
  };
  if (!found) {
    const text = headerLines("[not found]", {
      session_id: sessionId,
      found: false,
      meaning: "no job with this id is known (never started, or its exit was reported)",
    });
    return { content: [{ type: "text", text }], details, structuredContent: { ...details } };
  }
  const brief = mode === "print" || mode === "json" ? "; in this print/JSON run a wake can only arrive while the run is still going" : "";
  const title = [found.onExit, found.pattern].filter((status) => status !== undefined).join(", ");
  const text = headerLines(`[${title}]`, {
    session_id: sessionId,
    ...(found.onExit
      ? { on_exit: asked.onExit, status: found.onExit, meaning: nextTurn(asked.onExit === "next_turn", found.onExit, MEANING) }
      : {}),
    ...(found.pattern
      ? {
          wake_on_pattern: asked.wakeOnPattern ? metadata(asked.wakeOnPattern) : '""',
          wake_on_pattern_status: found.pattern,
          wake_on_pattern_meaning: `${nextTurn(asked.wakeOnPattern?.startsWith("next_turn:") === true, found.pattern, PATTERN_MEANING)}${found.pattern === "armed" ? brief : ""}`,
        }
      : {}),
    ...userNewsFields(found),
  });
  return { content: [{ type: "text", text }], details, structuredContent: { ...details } };
}

/** A status's meaning; armed at `next_turn`, what that level means: it never starts a turn. */
function nextTurn<S extends string>(atNextTurn: boolean, status: S, meanings: Record<S, string>): string {
  if (!atNextTurn || status !== "armed") return meanings[status];
  return "armed at next_turn: told in your next turn, whoever starts it (it never starts one: do not end your turn waiting for it)";
}
