/**
 * What the model is told about conditional waits: the `until_pattern`, `until_quiet_ms` and
 * `until_listening` descriptions, the guideline that shapes a first call (wait on a ready line, never sleep), and the
 * hints results give when they matter: a pipe job waiting for input with no prompt shown, and a run
 * of plain polls. The numbers come from the core's constants, so the text never disagrees with the limits.
 */
import { MAX_CONDITIONAL_EXEC_YIELD_MS, MAX_PATTERN_CHARS, MAX_QUIET_MS, MIN_QUIET_MS } from "../../core/index.ts";
import type { HintRule } from "./hints.ts";

/** `until_pattern`, on both tools. */
export const UNTIL_PATTERN_DESCRIPTION = `Return when a line matches this RE2 regex (≤${MAX_PATTERN_CHARS} chars).`;

/** `until_quiet_ms`, on both tools. */
export const UNTIL_QUIET_MS_DESCRIPTION = `Return after N ms of silence (${MIN_QUIET_MS}–${MAX_QUIET_MS}).`;

/** `until_listening`, on both tools (every word is paid on every request). */
export const UNTIL_LISTENING_DESCRIPTION = "Return when listening: true = a new address, N = port N, a URL or /path = it answers.";

/** How long a conditional exec may wait, for `exec_command`'s `yield_time_ms`. */
export const CONDITIONAL_EXEC_WINDOW = `${MAX_CONDITIONAL_EXEC_YIELD_MS} with until_*`;

export const WAIT_GUIDELINE = "exec_command: wait for a ready line with until_pattern and a long yield_time_ms, not sleeps or polls.";

/** A pipe job that waits for input and shows no prompt: the program may draw it only on a terminal (bash's `read -p`). */
export const PROMPT_ON_TERMINAL_HINT: HintRule = {
  id: "prompt-on-terminal",
  once: "job",
  applies: ({ report }) =>
    report.inputWait?.likely === true && !report.job.tty && report.inputWait.reason !== "prompt" && report.inputWait.promptShown !== true,
  text: "a program may print its prompt only to a terminal: run it with tty: true",
};

/** A second plain poll in a row on a running job: the waits that replace polling. */
export const REPEATED_POLL_HINT: HintRule = {
  id: "repeated-poll",
  once: "session",
  applies: ({ report, plainPollsInARow }) => plainPollsInARow >= 2 && !report.job.exit && !report.inputWait?.likely,
  text: 'instead of polling again: until_pattern (a line), until_quiet_ms (output settles), or on_exit: "wake" and end your turn',
};
