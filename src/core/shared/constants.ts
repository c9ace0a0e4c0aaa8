/*
 * shared/ — what every folder of the core reads: SPEC §8's limits and the environment's names (this
 * file; every other limit lives beside its user), the errors the model acts on (errors.ts), and
 * reading the environment (env-values.ts). Codex's values are kept where the model was trained on them.
 *
 * May import: nothing.
 */

/** Shortest attachment window of any call (Codex `MIN_YIELD_TIME_MS`). */
export const MIN_YIELD_MS = 250;

/** Longest window of `exec_command` and of a `write_stdin` that carries input (Codex `MAX_YIELD_TIME_MS`). */
export const MAX_YIELD_MS = 30_000;

/** An empty poll waits at least this long, so a model cannot busy-poll (Codex `MIN_EMPTY_YIELD_TIME_MS`). */
export const MIN_EMPTY_POLL_MS = 5_000;

/**
 * Longest empty poll. Codex allows 300 s; 290 s keeps a polling turn inside a 5-minute prompt-cache TTL.
 * `PI_UNIFIED_EXEC_MAX_EMPTY_POLL_MS` may only lower it.
 */
export const MAX_EMPTY_POLL_MS = 290_000;

/** Environment variable that lowers {@link MAX_EMPTY_POLL_MS}. */
export const MAX_EMPTY_POLL_ENV = "PI_UNIFIED_EXEC_MAX_EMPTY_POLL_MS";

/** `allow`: the person lets the model type into a prompt that hides what is typed (off by default; SPEC §3d). */
export const MODEL_SECRETS_ENV = "PI_UNIFIED_EXEC_MODEL_SECRETS";

/** `exec_command` window when the model gives none (Codex default). */
export const DEFAULT_EXEC_YIELD_MS = 10_000;

/** `write_stdin` window when the model gives none; an empty poll is then raised to {@link MIN_EMPTY_POLL_MS}. */
export const DEFAULT_WRITE_YIELD_MS = 250;

/** A job that exits this soon is reported directly and never addressable by id (Codex `EARLY_EXIT_GRACE_PERIOD`). */
export const EARLY_EXIT_GRACE_MS = 150;

/**
 * After the leader exits, output is read until the streams close or have been quiet this long (a
 * descendant may hold the pipe forever). Codex waits 50 ms; 100 leaves a loaded machine room to read.
 */
export const POST_EXIT_DRAIN_MS = 100;

/** The name a warm shell shows in `ps` and in the watchdog's registry while idle (a later sweep leaves it out of its notice). */
export const WARM_SHELL_NAME = "pi-unified-exec-warm-shell";

/** Environment variable that turns warm shells off (`0`). */
export const WARM_SHELL_ENV = "PI_UNIFIED_EXEC_WARM_SHELL";

/** Bytes of output retained per job between reads: half the head, half the tail (Codex `UNIFIED_EXEC_OUTPUT_MAX_BYTES`). */
export const HEAD_TAIL_BYTES = 1024 * 1024;

/** Names a PTY module to load instead of node-pty (a compatible one). */
export const PTY_MODULE_ENV = "PI_UNIFIED_EXEC_PTY_MODULE";

/** A stop sends the signal, then SIGKILL after this long if the job's processes are still there. */
export const KILL_GRACE_MS = 2_000;

/** Registry slots (Codex `MAX_UNIFIED_EXEC_PROCESSES`); unlike Codex, a live job is never evicted. */
export const MAX_JOBS = 64;
/** From this many slots in use, results warn the model (Codex `WARNING_UNIFIED_EXEC_PROCESSES`). */
export const WARN_JOBS = 60;

/** Environment variables for power users and tests (README: Limits). */
export const JOB_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_JOB_LOG_QUOTA_BYTES";
export const RUNTIME_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_RUNTIME_LOG_QUOTA_BYTES";
export const ON_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_ON_LOG_QUOTA";
export const LOG_DIR_ENV = "PI_UNIFIED_EXEC_LOG_DIR";

/** Streaming UI updates during a wait come at most this often (Pi's bash tool: every 100 ms). */
export const UPDATE_INTERVAL_MS = 250;
/** A parked runtime (after `/reload`) not adopted by the next extension instance within this time stops its jobs. */
export const RELOAD_ADOPTION_MS = 10_000;

/** On shutdown, time between SIGTERM to every job's group and SIGKILL to the survivors. */
export const SHUTDOWN_GRACE_MS = 1_000;

/** How often a group's emptiness is re-checked while waiting for it (a condition poll, not a delay). */
export const GROUP_PROBE_INTERVAL_MS = 20;

/** `<runtime token>:<job id>` in every job's environment: shutdown finds descendants that left its groups with `setsid`. */
export const JOB_MARKER_ENV = "PI_UNIFIED_EXEC_JOB";

/**
 * The host-death watchdog (`watchdog.sh`) and the startup sweep: time between SIGTERM and SIGKILL to
 * the groups of a Pi process that is gone (the script has the same second written in sh).
 */
export const WATCHDOG_KILL_GRACE_MS = 1_000;

/** A job whose processes together hold more resident memory (MB) is stopped; `0` turns it off (the person's setting). */
export const MAX_JOB_RSS_ENV = "PI_UNIFIED_EXEC_MAX_JOB_RSS_MB";

/** Private log directories of runtimes whose Pi process is gone are removed this many days after their last write. */
export const LOG_RETENTION_DAYS = 7;
/** Overrides {@link LOG_RETENTION_DAYS}: a whole number of days, 0 keeps every directory. */
export const LOG_RETENTION_ENV = "PI_UNIFIED_EXEC_LOG_RETENTION_DAYS";

/** Lines a PTY job's emulator keeps above the screen (~0.4 MB a job at 120 columns; xterm's 1000, ten times that). */
export const SCREEN_SCROLLBACK_LINES = 100;

// In files of their own: input waits (SPEC §3a); conditional waits and jobs that speak up (§3a, §3c).
export * from "./input-wait-limits.ts";
export * from "./pattern-limits.ts";
