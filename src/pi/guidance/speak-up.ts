/**
 * What the model is told about jobs that speak up: `wake_on_pattern` (on `exec_command` and
 * `set_on_exit`), the listening addresses results carry, and the guidelines that replace polling.
 * Strings only; the numbers come from the core's constants.
 */
import { MAX_PATTERN_CHARS, PATTERN_WAKE_BUDGET, PATTERN_WAKE_COOLDOWN_S, PATTERN_WAKE_LINE_CHARS } from "../../core/index.ts";

/** `wake_on_pattern` on `exec_command`. */
export const WAKE_ON_PATTERN_DESCRIPTION =
  "Wake me when a later output line matches this regular expression (RE2 syntax, as until_pattern; at most " +
  `${MAX_PATTERN_CHARS} characters): one follow-up prompt names the line (at most ${PATTERN_WAKE_LINE_CHARS} characters) and the session; ` +
  "read the output around it with write_stdin. Only lines printed while no call of yours reads the job count; " +
  `further matches within ${PATTERN_WAKE_COOLDOWN_S} s are counted into the next wake, and after ${PATTERN_WAKE_BUDGET} wakes with no call ` +
  "on the job the pattern disarms itself. set_on_exit changes or disarms it.";

/** `wake_on_pattern` on `set_on_exit`. */
export const SET_WAKE_ON_PATTERN_DESCRIPTION =
  'Arm or replace the job\'s wake_on_pattern (see exec_command); "" disarms it. The status says disarmed, armed or already_none.';

export const SPEAK_UP_GUIDELINES: readonly string[] = [
  "exec_command: when the user wants to hear when a server or watcher logs something (an error, a finished rebuild), " +
    'start it with wake_on_pattern (e.g. "(?i)error|failed" or "Compiled") and do other work or end your turn: a matching line wakes you. ' +
    "Do not poll it with write_stdin to watch for that line. Keep the pattern specific: a pattern that matches every line wakes you for nothing.",
  "exec_command: results and list_sessions name the addresses a job listens on (listening: 127.0.0.1:8765): use them instead of guessing a port, " +
    "and check list_sessions before starting a server that may already be running.",
];
