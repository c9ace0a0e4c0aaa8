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
 * Largest total width of the counted repeats a pattern may have where the output chooses where they
 * start (pattern-cost.ts: `[ab]{n}` after an `a`, `.{0,n}` after `error`). re2js builds a DFA state
 * per set of live positions, up to 2^(width+1) of them, each on its slow path (some 30 µs idle, over
 * 100 µs on a busy machine), kept in a cache of 8 MB (its default `maxMem`) at some 300–400 bytes a
 * state. Measured with re2js 2.10 on random a/b lines: `a[ab]{10}[cd]` settles at 2 049 states
 * (under 1 MB, built in about 160 ms on a loaded two-core machine); `{12}` at 8 193 (3 MB, 550 ms
 * there: more than a pattern's warm-up credit below); `{14}` passes 19 000 states, fills the cache,
 * and every later read rebuilds it or falls back to the automaton simulation (under 1 MB/s; `{490}`:
 * 0.07 MB/s). `(?i)error.{0,n}timeout` on word-dense log lines grows more slowly (n = 12: 107 states;
 * 24: 1 400; 64: 15 000, 3 MB/s). At 10 the worst shape (`a[ab]{10}[cd]` on random a/b lines) still
 * missed the 20 MB/s goal in some runs, its states built inside the measured megabytes (16–21 MB/s);
 * at 8 (513 states) it ran at 31 MB/s on the idle machine.
 */
export const MAX_COUNTED_REPEAT = 8;

/**
 * Matching work a pattern may cost a job's output before it is suspended for that job (the model is
 * told once): {@link PATTERN_COST_MS} per {@link PATTERN_COST_BYTES} of text tested, about 3 MB/s, a
 * seventh of the 20 MB/s every accepted pattern reaches on the benchmark's shapes. A pattern slower
 * than that on this job's output would hold Pi's event loop 20 ms per 64 KiB read (a pipe's read
 * size): a flood would freeze Pi for seconds. Work beyond that share is a debt that faster lines pay
 * back; the pattern is suspended when the debt passes {@link PATTERN_COST_DEBT_MS}, so a thread the
 * machine paused for a moment never suspends a pattern, and no read pays more than its share and
 * this much. A line costs at least {@link PATTERN_COST_MIN_CHARS} characters' share (a call's own
 * overhead, the same for every pattern). The first {@link PATTERN_COST_WARMUP_MS} over the share are
 * free: the engine builds its DFA states then (up to 8 193 for an accepted pattern, some 30 µs each).
 */
export const PATTERN_COST_MS = 20;
export const PATTERN_COST_BYTES = 64 * 1024;
export const PATTERN_COST_DEBT_MS = 60;
export const PATTERN_COST_MIN_CHARS = 64;
export const PATTERN_COST_WARMUP_MS = 250;

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

export const PATTERN_WAKE_COOLDOWN_ENV = "PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S";
/** Turns notices may start per ten minutes in one Pi session (the person's setting; completion/attention.ts). */
export const WAKE_TURNS_ENV = "PI_UNIFIED_EXEC_WAKE_TURNS";

/** Characters of the matched line a pattern wake shows: one line, enough to act on, never a flood. */
export const PATTERN_WAKE_LINE_CHARS = 300;

/**
 * Matching lines one read remembers by number, for the header that names what its cut left out
 * (`pattern_matched_unshown`): enough for any cut a model reads (the cap shows 2 000 lines); a flood
 * of matches beyond it is counted, not numbered.
 */
export const READ_MATCHES_KEPT = 4096;

/** Bytes of an unfinished line a read's matcher keeps until its line break (the test looks at 8 K characters). */
export const READ_MATCH_LINE_BYTES = 4 * LINE_TEST_CHARS;
