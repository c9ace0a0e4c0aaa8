/** The limits of the input-wait probe (`conditions/input-wait.ts`), re-exported by `constants.ts`. */

/** A prompt-like unfinished last line counts as waiting for input only after this much silence. */
export const INPUT_WAIT_QUIET_MS = 1_000;

/** The prompt rule looks at this many characters at the end of the unfinished last line. */
export const PROMPT_LINE_CHARS = 200;

/** The input-wait probe looks at this many of a job's processes at most: a fork bomb must not make it slow. */
export const INPUT_WAIT_MAX_PROCESSES = 1_024;

/** A poll()/select() descriptor list longer than this is not read: the probe must stay cheap. */
export const INPUT_WAIT_MAX_POLL_FDS = 256;
