/** The limits of the input-wait probe (`input-wait/input-wait.ts`) and the input wake, re-exported by `constants.ts`. */

/** A prompt-like unfinished last line counts as waiting for input only after this much silence. */
export const INPUT_WAIT_QUIET_MS = 1_000;

/** The prompt rule looks at this many characters at the end of the unfinished last line. */
export const PROMPT_LINE_CHARS = 200;

// The input wake (SPEC §3e).

/** How long a job with a wake armed waits for input, untouched, before it wakes the model (input-wake-rule.ts). */
export const INPUT_WAKE_ENV = "PI_UNIFIED_EXEC_INPUT_WAKE_S";
