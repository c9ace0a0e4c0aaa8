/**
 * What the model is told about jobs that speak up: `wake_on_pattern` (on `exec_command` and
 * `set_on_exit`) and the guideline to be woken rather than poll. The numbers come from the core's constants.
 */
import { PATTERN_WAKE_COOLDOWN_S } from "../../core/index.ts";

/** `wake_on_pattern` on `exec_command`. */
export const WAKE_ON_PATTERN_DESCRIPTION = `Wake me when a later line matches this regex (${PATTERN_WAKE_COOLDOWN_S} s cooldown; "next_turn:" prefix: as on_exit).`;

/** `wake_on_pattern` on `set_on_exit`. */
export const SET_WAKE_ON_PATTERN_DESCRIPTION = 'As exec_command\'s; "" disarms it.';

export const WAKE_GUIDELINE =
  'on_exit: "wake", wake_on_pattern, yield_until: only when the user asks to be told or to wait; then end your turn.';
