/**
 * The hints of `exec_command` and `write_stdin` results, in the order they are said when a call earns
 * several. A concern adds its rule here (the rule itself lives in that concern's guidance file).
 */
import type { JobReport } from "../../core/index.ts";
import { INPUT_WAIT_HINT, SECRET_HINT, USER_TYPING_HINT } from "./ask-user.ts";
import { BACKGROUND_HINT } from "./background.ts";
import { PROMPT_ON_TERMINAL_HINT, REPEATED_POLL_HINT } from "./conditional-waits.ts";
import { type CallShape, type HintRule, hintLedger } from "./hints.ts";
import { SCREEN_HINT } from "./screens.ts";

export const JOB_HINTS: readonly HintRule[] = [
  USER_TYPING_HINT,
  SECRET_HINT,
  INPUT_WAIT_HINT,
  PROMPT_ON_TERMINAL_HINT,
  BACKGROUND_HINT,
  REPEATED_POLL_HINT,
  SCREEN_HINT,
];

/** The `hint` line of this call's result in the session whose runtime is `owner`, if it earns one not given before. */
export function jobHint(owner: object, report: JobReport, call: CallShape): string | undefined {
  return hintLedger(owner).take(JOB_HINTS, report, call);
}
