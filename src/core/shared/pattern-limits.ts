/**
 * The limits of patterns run over a job's output: `until_pattern` (a conditional wait) and
 * `wake_on_pattern` (a wake when a later line matches) — and the other conditions and wakes beside
 * them (`until_listening`, the input wake), each with the reason for its value. Re-exported by constants.ts.
 */

// Conditional waits (SPEC §3a).

/** Longest `until_pattern`, in characters: a readiness line or a prompt needs far less; compile cost stays bounded. */
export const MAX_PATTERN_CHARS = 500;

/**
 * Largest compiled `until_pattern`, in engine instructions. Matching is linear in the line, but its
 * constant grows with the program: 40 × `\p{L}{1000}` (440 characters, 40 002 instructions) took 8.5 s
 * on a 20 K-character line. Ordinary patterns stay far below (a 480-character alternation of words: 201);
 * only large counted repetitions (`.{1000}`) reach it.
 */
export const MAX_PATTERN_INSTRUCTIONS = 1_000;

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

/** `matched_line` is cut to this many characters (around the match) so a huge line cannot flood the result. */
export const MATCHED_LINE_CHARS = 500;

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
 * `wake_on_pattern` tests a job's unfinished last line once the job has printed nothing this long:
 * a prompt (`Password: `) has no line break, but a line still being written must not be judged by
 * its first half.
 */
export const PATTERN_WAKE_QUIET_MS = 1_000;

/**
 * For this long after the user stops typing into a job, what it prints is taken as their reply (the
 * terminal's echo, a REPL's answer, which come within milliseconds) and `wake_on_pattern` does not
 * test it: a wake must never carry what the user typed back to the model. A poll returns it as usual.
 */
export const TYPING_REPLY_MS = 1_000;

/**
 * Least time between two pattern wakes of one job, in seconds, and its bounds: a server that logs
 * an error a second would otherwise start a turn a second. Matches in between are counted and named
 * by the next wake. `PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S` sets it (tests use 1).
 */
export const PATTERN_WAKE_COOLDOWN_S = 30;
export const MIN_PATTERN_WAKE_COOLDOWN_S = 1;
export const MAX_PATTERN_WAKE_COOLDOWN_S = 3_600;
export const PATTERN_WAKE_COOLDOWN_ENV = "PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S";

/**
 * Pattern wakes of one job with no call of the model on it in between, after which the pattern
 * disarms itself (the last wake says so): a model that ignores a noisy pattern stops paying for it.
 */
export const PATTERN_WAKE_BUDGET = 10;

/** Characters of the matched line a pattern wake shows: one line, enough to act on, never a flood. */
export const PATTERN_WAKE_LINE_CHARS = 300;

// `until_listening` (SPEC §3a) and the input wake (§3e).

/**
 * How often an `until_listening` wait reads the job's sockets: a server's bind is seen within about
 * this long, while one scan of one job (a few ms at most) costs a few percent of a core at worst.
 */
export const LISTEN_CHECK_MS = 100;

/**
 * During an `until_listening` wait, a socket of the job seen not listening is looked at again after
 * this long (1 s otherwise): a scan that lands between a server's `bind` and its `listen` (a loaded
 * machine deschedules it there) still ends the wait about 0.3 s after the bind.
 */
export const LISTEN_RECHECK_MS = 200;

/** Highest TCP port `until_listening` accepts. */
export const MAX_LISTEN_PORT = 65_535;

/**
 * How long a job with a wake armed must wait for input, untouched, before it wakes the model, in
 * seconds, and its bounds (`PI_UNIFIED_EXEC_INPUT_WAKE_S`, `0` off). 30 s: a prompt answered by a
 * script or a slow start is not stuck; a person at a Claude Code prompt is told after about 45 s.
 */
export const INPUT_WAKE_S = 30;
export const MIN_INPUT_WAKE_S = 2;
export const MAX_INPUT_WAKE_S = 3_600;
export const INPUT_WAKE_ENV = "PI_UNIFIED_EXEC_INPUT_WAKE_S";

/**
 * How often jobs with a wake armed are probed for an input wait: the probe reads a few /proc files
 * per process of those jobs only, and a wake 1 s late on a 30 s rule does not matter.
 */
export const INPUT_WAKE_PROBE_MS = 1_000;

/** Characters of the prompt line an input wake quotes: one line, enough to answer it. */
export const INPUT_WAKE_LINE_CHARS = 300;
