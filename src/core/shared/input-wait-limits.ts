/** The limits of the input-wait probe (`conditions/input-wait.ts`) and the input wake, re-exported by `constants.ts`. */

/** A prompt-like unfinished last line counts as waiting for input only after this much silence. */
export const INPUT_WAIT_QUIET_MS = 1_000;

/** The prompt rule looks at this many characters at the end of the unfinished last line. */
export const PROMPT_LINE_CHARS = 200;

/** The input-wait probe looks at this many of a job's processes at most: a fork bomb must not make it slow. */
export const INPUT_WAIT_MAX_PROCESSES = 1_024;

/** A poll()/select() descriptor list longer than this is not read: the probe must stay cheap. */
export const INPUT_WAIT_MAX_POLL_FDS = 256;

// The input wake (SPEC §3e).

/**
 * How long a job with a wake armed must wait for input, untouched, before it wakes the model, in
 * seconds, and its bounds (`PI_UNIFIED_EXEC_INPUT_WAKE_S`, `0` off). 30 s: a prompt answered by a
 * script or a slow start is not stuck; a person at a Claude Code prompt is told after about 45 s.
 */
export const INPUT_WAKE_S = 30;
export const MIN_INPUT_WAKE_S = 2;
export const MAX_INPUT_WAKE_S = 3_600;
export const INPUT_WAKE_ENV = "PI_UNIFIED_EXEC_INPUT_WAKE_S";
