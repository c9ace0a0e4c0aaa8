/**
 * What the model is told about conditional waits: parameter descriptions for
 * `until_pattern` and `until_quiet_ms`, and prompt guidelines for `exec_command` and `write_stdin`.
 * Strings only; the tool definitions include them. The numbers come from the core's constants, so
 * the text never disagrees with the limits enforced.
 */
import {
  INPUT_WAIT_QUIET_MS,
  MATCHED_LINE_CHARS,
  MAX_CONDITIONAL_EXEC_YIELD_MS,
  MAX_PATTERN_CHARS,
  MAX_QUIET_MS,
  MIN_QUIET_MS,
} from "../../core/index.ts";

/** `until_pattern`, on both tools. */
export const UNTIL_PATTERN_DESCRIPTION =
  "Return as soon as an output line matches this regular expression (RE2 syntax, found anywhere in the line; " +
  `at most ${MAX_PATTERN_CHARS} characters; no look-around or back-references). Lines are tested as you would see them, ` +
  "escape codes removed, including an unfinished last line such as a prompt (`Password: `, `[y/N] `). " +
  "Prefix (?i) to ignore case: `(?i)ready|listening on`. Escape literal brackets and dots: `\\[y/N\\]`. " +
  `The result has wait_status: matched and matched_line (at most ${MATCHED_LINE_CHARS} characters) and ends with that line; ` +
  "later output stays for the next call. On a terminal, the echo of what this call typed never matches.";

/** `until_quiet_ms`, on both tools. */
export const UNTIL_QUIET_MS_DESCRIPTION =
  `Return once the job has printed nothing for this many milliseconds (${MIN_QUIET_MS}–${MAX_QUIET_MS}) after printing something new ` +
  "in this call; a job that has printed nothing yet is not quiet. The result has wait_status: quiet. " +
  "With until_pattern too, whichever comes first ends the wait.";

/** `until_listening`, on both tools (short: every word is paid on every request). */
export const UNTIL_LISTENING_DESCRIPTION =
  "true: return once the job listens on a new TCP address; a port (1–65535): once that port is listened on.";

/** Added to `exec_command`'s `yield_time_ms` description. */
export const EXEC_CONDITIONAL_YIELD_NOTE = `With an until_ condition it may be up to ${MAX_CONDITIONAL_EXEC_YIELD_MS}: the condition, the exit, a cancel or a user message ends it earlier.`;

/** Added to `write_stdin`'s `yield_until` description. */
export const YIELD_UNTIL_PATTERN_NOTE = "May be combined with until_pattern: wait until that line appears or the time comes.";

/** `input_wait`, for the result field's documentation and the tools' descriptions. */
export const INPUT_WAIT_NOTE =
  "input_wait: likely means the job is blocked reading its own stdin (a prompt or a REPL), " +
  `seen from the system or from a prompt-like last line after ${INPUT_WAIT_QUIET_MS / 1000} s of silence.`;

export const EXEC_COMMAND_GUIDELINES: readonly string[] = [
  "exec_command: to start something and wait until it is ready (a dev server, a database, a watcher), pass until_listening: true, or until_pattern " +
    `with its ready line (e.g. "(?i)ready|listening on"), and a yield_time_ms long enough for a slow start (up to ${MAX_CONDITIONAL_EXEC_YIELD_MS}); ` +
    "the call returns as soon as the line appears, instead of sleeping or polling.",
  "exec_command: to run something and get its output once it settles (a build that ends in a watch, a test run that keeps a process alive), pass until_quiet_ms (e.g. 2000).",
  "exec_command: a result with input_wait: likely is waiting for an answer (a prompt, a password, a REPL): answer it with write_stdin or stop it with kill_session; do not poll it.",
];

export const WRITE_STDIN_GUIDELINES: readonly string[] = [
  'write_stdin: when you send a command to a REPL or shell and need its result, pass until_pattern for the line that shows it is done (often the next prompt, e.g. "^>>> $"), or until_quiet_ms.',
  "write_stdin: to wait for a running job to print a particular line, poll with until_pattern (with yield_time_ms, or yield_until for a long wait) instead of polling repeatedly.",
  "write_stdin: a job that reports input_wait: likely will not progress until it gets input: answer it, or stop it with kill_session; never keep polling it.",
];
