/** The limits of the input-wait probe (`input-wait/input-wait.ts`) and the input wake, re-exported by `constants.ts`. */

/** A prompt-like unfinished last line counts as waiting for input only after this much silence. */
export const INPUT_WAIT_QUIET_MS = 1_000;

/** The prompt rule looks at this many characters at the end of the unfinished last line. */
export const PROMPT_LINE_CHARS = 200;

// The input wake (SPEC §3e).

/** How long a job with a wake armed waits for input, untouched, before it wakes the model (input-wake-rule.ts). */
export const INPUT_WAKE_ENV = "PI_UNIFIED_EXEC_INPUT_WAKE_S";

/**
 * How often jobs with a wake armed are probed for an input wait: the probe reads a few /proc files
 * per process of those jobs only, and a wake 1 s late on a 30 s rule does not matter.
 */
export const INPUT_WAKE_PROBE_MS = 1_000;

/** Characters of the prompt line an input wake quotes: one line, enough to answer it. */
export const INPUT_WAKE_LINE_CHARS = 300;
