/**
 * The limits of patterns run over a job's output: `until_pattern` (a conditional wait) and
 * `wake_on_pattern` (a wake when a later line matches) — and the other conditions and wakes beside
 * them (`until_listening`, the input wake), each with the reason for its value. Re-exported by constants.ts.
 */

// Conditional waits (SPEC §3a).

/** Longest `until_pattern`, in characters: a readiness line or a prompt needs far less; compile cost stays bounded. */
export const MAX_PATTERN_CHARS = 500;

/**
 * Longest line tested whole. A longer line is tested as its first half and its last half of this many
 * characters (each as if the line ended or began there), and only those halves are kept while it is
 * unfinished, so one test looks at this many characters at most whatever the line (a 20 MB line costs
 * one such test). Measured per test: about 0.1 ms for ordinary patterns on log text; the worst seen
 * was about 0.5 s, a DFA-hostile `a[ab]{490}[cd]` on random a/b text, where the engine falls back to
 * simulating its automaton (linear, but with a constant that grows with the pattern). A readiness line
 * or a prompt is never this long.
 */
export const LINE_TEST_CHARS = 8 * 1024;

/** `until_quiet_ms` bounds: below 100 ms ordinary pauses between writes count as quiet; above a minute, poll instead. */
export const MIN_QUIET_MS = 100;
export const MAX_QUIET_MS = 60_000;

/**
 * Longest `exec_command` window when `until_pattern` or `until_quiet_ms` is given: the condition (or the
 * exit, a cancel, a steer) ends it early, so a slow server start costs one call, not ten polls.
 */
export const MAX_CONDITIONAL_EXEC_YIELD_MS = 300_000;

// Jobs that speak up (SPEC §3c).

/**
 * For this long after the user stops typing into a job, what it prints is taken as their reply (the
 * terminal's echo, a REPL's answer, which come within milliseconds) and `wake_on_pattern` does not
 * test it: a wake must never carry what the user typed back to the model. A poll returns it as usual.
 */
export const TYPING_REPLY_MS = 1_000;

export const PATTERN_WAKE_COOLDOWN_ENV = "PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S";
/** Turns notices may start per ten minutes in one Pi session (the person's setting; completion/attention.ts). */
export const WAKE_TURNS_ENV = "PI_UNIFIED_EXEC_WAKE_TURNS";

/** Characters of the matched line a pattern wake shows: one line, enough to act on, never a flood. */
export const PATTERN_WAKE_LINE_CHARS = 300;
