import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { SetOnExitStatus } from "../../core/index.ts";
import { headerLines } from "./format.ts";

/** Result of `set_on_exit`: what became of the job's wake. */

export const setOnExitResultSchema = Type.Object({
  session_id: Type.Integer(),
  found: Type.Boolean(),
  on_exit: Type.Union([Type.Literal("none"), Type.Literal("wake")]),
  status: Type.Optional(
    Type.Union([
      Type.Literal("disarmed"),
      Type.Literal("already_none"),
      Type.Literal("armed"),
      Type.Literal("already_armed"),
      Type.Literal("too_late"),
    ]),
  ),
});

export interface SetOnExitDetails {
  session_id: number;
  found: boolean;
  on_exit: "none" | "wake";
  status?: SetOnExitStatus;
}

const MEANING: Record<SetOnExitStatus, string> = {
  disarmed: "no wake will follow; the job keeps running (or stays readable) as before",
  already_none: "no wake was armed",
  armed: "one follow-up prompt will announce the exit if nothing observes it",
  already_armed: "the wake was armed already",
  too_late: "the job has already exited or its wake was already sent; that cannot be changed now",
};

export function setOnExitResult(
  sessionId: number,
  onExit: "none" | "wake",
  outcome: { found: false } | { found: true; status: SetOnExitStatus },
): AgentToolResult<SetOnExitDetails> {
  const details: SetOnExitDetails = {
    session_id: sessionId,
    found: outcome.found,
    on_exit: onExit,
    ...(outcome.found ? { status: outcome.status } : {}),
  };
  const text = outcome.found
    ? headerLines(`[${outcome.status}]`, {
        session_id: sessionId,
        on_exit: onExit,
        status: outcome.status,
        meaning: MEANING[outcome.status],
      })
    : headerLines("[not found]", {
        session_id: sessionId,
        found: false,
        meaning: "no job with this id is known (never started, or its exit was reported)",
      });
  return { content: [{ type: "text", text }], details, structuredContent: { ...details } };
}
