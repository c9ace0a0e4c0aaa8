/*
 * shared/ — what every other folder of the core reads: each limit and default with the reason for
 * its value (constants.ts), the errors the model is told to act on (errors.ts), and reading the
 * environment (env-values.ts).
 *
 * May import: nothing.
 */
/**
 * Every limit and default of the job runtime, in one place. Codex's values are kept where the model
 * was trained on them; each divergence says why.
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

/** `exec_command` window when the model gives none (Codex default). */
export const DEFAULT_EXEC_YIELD_MS = 10_000;

/** `write_stdin` window when the model gives none; an empty poll is then raised to {@link MIN_EMPTY_POLL_MS}. */
export const DEFAULT_WRITE_YIELD_MS = 250;

/**
 * `write_stdin` window when the model gives none but a condition (`until_pattern`, `until_quiet_ms`)
 * can end it: the longest a write may wait (Codex `MAX_YIELD_TIME_MS`). 250 ms would end the wait before
 * the line or the quiet it asked for could come, and the model would have to know a rule to avoid that.
 */
export const DEFAULT_CONDITIONAL_WRITE_YIELD_MS = MAX_YIELD_MS;

/**
 * A job that exits this soon after spawn reports its exit directly and never becomes addressable by id
 * (Codex `EARLY_EXIT_GRACE_PERIOD`), so one-shot commands leave nothing behind in the registry.
 */
export const EARLY_EXIT_GRACE_MS = 150;

/**
 * After the leader exits, output is still read until the streams close or the stream has been quiet
 * this long (counting only time spent reading). A backgrounded descendant (`npm run dev &`) can hold
 * the pipe open forever; it must not delay the exit report. Codex waits 50 ms; 100 ms leaves room for
 * a loaded machine to read what the leader wrote last (up to a kernel buffer of 64 KiB or more).
 */
export const POST_EXIT_DRAIN_MS = 100;

/**
 * The quiet window above restarts with every chunk, so the leader's last output is never cut off while
 * it is still being read; this caps the drain for a descendant that prints without pause, whose output
 * after the report is still logged.
 */
export const POST_EXIT_DRAIN_CAP_MS = 2_000;

/**
 * A shell that exits while processes of its job still run (`server &`) leaves a running job. The
 * call that sees the shell exit waits this much longer for them to end before it returns the job as
 * running: a short-lived background (`sleep 0.4 & echo hi`) still ends the job within the call, and
 * 1 s leaves a loaded machine room for that while a server's first lines arrive with the result.
 */
export const BACKGROUND_SETTLE_MS = 1_000;

/**
 * How often a job whose shell has exited checks that its processes still run, when no stream closes
 * to say so (a server with its output sent to /dev/null). Each check reads one process's /proc entry
 * while a known member lives (a full table read only when all known ones are gone), so 100 ms costs
 * next to nothing, and a job ends at most this long after its last process.
 */
export const BACKGROUND_PROBE_MS = 100;

/** Processes a `background:` line names (the rest are counted): enough to recognise a server and its helpers. */
export const BACKGROUND_NAMED = 3;

/** Characters of each named process's command line in a `background:` line (one line, bounded header). */
export const BACKGROUND_COMMAND_CHARS = 60;

/**
 * Bytes a job's stdin may hold that the child has not read yet (our queue plus what is handed to the OS
 * and not yet consumed). A child that stops reading costs at most this much memory; a write beyond it
 * waits within its call's window and is then refused in part, with the counts in the result.
 */
export const INPUT_QUEUE_BYTES = 1024 * 1024;

/** Input is handed to the OS in pieces of at most this size, so one write never holds the event loop. */
export const INPUT_CHUNK_BYTES = 64 * 1024;

/**
 * A PTY whose input buffer is full answers writes with EAGAIN and has no event to say it has room
 * again; the writer retries after a delay that doubles up to this bound (an interactive write almost
 * never waits: the line discipline has room).
 */
export const PTY_WRITE_RETRY_MAX_MS = 50;

/**
 * Each output pipe of a pipe job is read into a buffer of this size, reused for every read (Node's
 * own reads allocate a fresh buffer of the same 64 KiB each time, garbage that piles up outside the
 * JS heap during a flood). Reads joined while the pipe streams never exceed it: it is also the most a
 * single `data` event carries.
 */
export const READ_BUFFER_BYTES = 64 * 1024;
/**
 * Bytes one output pipe hands over in one turn of the event loop; then it pauses until the next
 * turn. libuv reads a readable pipe up to 32 times per turn (2 MiB at 64 KiB), and every byte is
 * counted, retained, previewed and staged for the log: at 512 KiB a flooding job's share of a turn
 * stays a few milliseconds, and sixteen floods take turns instead of blocking Pi's loop.
 * READ_TURN_MS: what all pipes together may spend delivering in one turn (transport/read-turn.ts), a
 * tenth of the 100 ms Pi's loop may pause; an armed pattern at its budget (20 ms per 64 KiB) made one
 * pipe's 512 KiB turn up to 160 ms.
 */
export const READ_TURN_BYTES = 512 * 1024;
export const READ_TURN_MS = 10;
/**
 * While a pipe streams, its reads are held and delivered together at most this long after the first
 * of them (see `transport/read-batch.ts`); a read after a quiet spell this long is delivered at once.
 * One millisecond is the event loop's timer resolution, and far below anything a wait measures.
 */
export const OUTPUT_BATCH_MS = 1;
/** A pipe's held bytes are delivered when less room than this is left for its next read. */
export const READ_MIN_ROOM_BYTES = 16 * 1024;

/** Largest job handed to a warm shell (workdir, program, arguments, per-job variables): inside the smallest
 * socket buffer (macOS: 8 KiB), so the write never waits; a longer command (a large heredoc) spawns directly. */
export const WARM_SHELL_HANDOFF_BYTES = 4 * 1024;

/**
 * While a warm shell has not answered a job it was handed, it is sent SIGCONT this often: something
 * may have stopped it while idle, and a stopped shell never answers. An idle one answers in well
 * under a millisecond, so this only matters for a stopped (or starved) shell. There is no timeout:
 * a shell that was handed a job may be running it, so only its answer decides (see `warm-shell.ts`).
 */
export const WARM_SHELL_CONTINUE_MS = 1_000;

/** The name a warm shell shows in `ps` and in the watchdog's registry while idle (a later sweep leaves it out of its notice). */
export const WARM_SHELL_NAME = "pi-unified-exec-warm-shell";

/** Environment variable that turns warm shells off (`0`). */
export const WARM_SHELL_ENV = "PI_UNIFIED_EXEC_WARM_SHELL";

/**
 * Warm shells a runtime gives up on: after this many that could not start, died idle or could not be
 * handed a job, it spawns every job directly (a broken system must not fork in vain forever).
 */
export const WARM_SHELL_MAX_FAILURES = 3;
/**
 * Warm shells kept after a burst: a model sends several calls in one message (`git status`, `ls`,
 * `cat` …), and each call without a shell forks Pi on its path. Eight covers the bursts seen; each
 * idle shell is a sleeping bash of a few MiB.
 */
export const WARM_SHELL_POOL_MAX = 8;
/** After this long without a job, the pool is back to one shell. */
export const WARM_SHELL_POOL_QUIET_MS = 30_000;

/** Bytes of output retained per job between reads: half the head, half the tail (Codex `UNIFIED_EXEC_OUTPUT_MAX_BYTES`). */
export const HEAD_TAIL_BYTES = 1024 * 1024;

/**
 * Log bytes queued for the disk before the job stops reading its child. The child then blocks on a
 * full pipe until the disk catches up: a slow disk costs neither memory nor log bytes.
 */
export const LOG_PENDING_BYTES = 1024 * 1024;

/**
 * Log bytes are copied into staging buffers of this size before they go to the file: a flood is
 * written in pieces this large, and no log holds on to a read buffer (pipes reuse theirs).
 */
export const LOG_STAGE_BYTES = 256 * 1024;
/** Staging buffers kept for reuse when no log needs them (process-wide): 2 MiB at most. */
export const LOG_STAGE_SPARE = 8;

/**
 * Longest a finished job's exit report waits for its log to reach the disk, so the log is complete
 * when the model reads it. Bounded: a hung disk must not hold the report forever.
 */
export const LOG_FLUSH_ON_EXIT_MS = 5_000;

/**
 * PTY size when the model gives none. Wider than the classic 80×24 Codex uses, so tables and
 * progress bars are not wrapped into noise; clamps keep a typo from allocating an absurd screen.
 */
export const DEFAULT_COLS = 120;
export const DEFAULT_ROWS = 30;
export const MIN_COLS = 20;
export const MAX_COLS = 500;
export const MIN_ROWS = 5;
export const MAX_ROWS = 300;

/** The optional native module behind `tty: true`; `PI_UNIFIED_EXEC_PTY_MODULE` may name a compatible one. */
export const PTY_MODULE = "@homebridge/node-pty-prebuilt-multiarch";
export const PTY_MODULE_ENV = "PI_UNIFIED_EXEC_PTY_MODULE";

/** Hard runtime deadline of a job when the model gives none: long enough for a big build, never forever. */
export const DEFAULT_TIMEOUT_S = 1_800;
/** Longest hard deadline a job may ask for (one day). */
export const MAX_TIMEOUT_S = 86_400;

/** A stop sends the signal, then SIGKILL after this long if the job's processes are still there. */
export const KILL_GRACE_MS = 2_000;
/** After SIGKILL, how long a stop waits for the kernel to confirm before reporting `cleanup: pending`. */
export const KILL_CONFIRM_MS = 2_000;

/**
 * Registry slots (Codex `MAX_UNIFIED_EXEC_PROCESSES`). Unlike Codex, a live job is never evicted to
 * make room: when every slot holds a live job, a new command is refused before it is spawned.
 */
export const MAX_JOBS = 64;
/** From this many slots in use, results warn the model (Codex `WARNING_UNIFIED_EXEC_PROCESSES`). */
export const WARN_JOBS = 60;

/** Log bytes one job may write before its log becomes partial (head kept, tail appended at exit). */
export const JOB_LOG_QUOTA_BYTES = 16 * 1024 * 1024;
/** Log bytes all jobs of one Pi runtime may write together. */
export const RUNTIME_LOG_QUOTA_BYTES = 256 * 1024 * 1024;
/**
 * Once a log is partial, the last bytes kept in memory to append at exit, so the log has both ends.
 * It takes the place of the pending-write allowance, which a partial log no longer uses.
 */
export const LOG_TAIL_BYTES = 512 * 1024;
/**
 * Bytes all exit tails of one runtime may add together, beyond its quota. Without it the quota is no
 * bound: every job started after the quota still wrote a full tail (80 such jobs: 40 MiB more). 16
 * MiB keeps the tails of the first 32 partial logs whole; later logs keep only their marker.
 */
export const LOG_TAIL_BUDGET_BYTES = 16 * 1024 * 1024;

/** Environment variables for power users and tests (README: Limits). */
export const JOB_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_JOB_LOG_QUOTA_BYTES";
export const RUNTIME_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_RUNTIME_LOG_QUOTA_BYTES";
export const ON_LOG_QUOTA_ENV = "PI_UNIFIED_EXEC_ON_LOG_QUOTA";
export const LOG_DIR_ENV = "PI_UNIFIED_EXEC_LOG_DIR";

/** `ask_user`: the model's words for the user, one line they can read at a glance. */
export const MAX_ASK_USER_CHARS = 300;

/**
 * How long a key the user typed (or a line they entered) may wait for the job's stdin to take it:
 * a program that stops reading must not freeze the overlay; the bytes still count as typed.
 */
export const TYPED_DELIVERY_MS = 5_000;

/**
 * Finished jobs are forgotten (their groups proven empty, which reads the process table) once calls
 * have paused this long: calls back to back or in one message never pay for it between them.
 */
export const PRUNE_IDLE_MS = 500;
/** Tracked jobs from which a prune runs at once rather than at the pause: a long burst stays bounded. */
export const PRUNE_BACKLOG_JOBS = 32;

/**
 * Longest body (characters after the introducer) of a control sequence or control string (CSI, OSC,
 * DCS, SOS, PM, APC, nF escape) that is swallowed, or held back at the end of a read for the next
 * read to complete. Long enough for a hyperlink with a long URL, a title, an OSC 52 copy of a page of
 * text, or one kitty-graphics chunk (4 KiB of payload); short enough that a stray introducer delays
 * at most 16 Ki characters of text and each read rescans at most that much. Longer or unterminated,
 * the introducer is dropped and the body is shown as text (its own control characters still removed).
 */
export const MAX_CONTROL_SEQUENCE_CHARS = 16 * 1024;

/**
 * A read is decoded in part (only what its result can show; see shown-part.ts) when at least this
 * much of it can be skipped: below it the saving is smaller than a second look at the bytes costs,
 * and most reads stay whole.
 */
export const PARTIAL_DECODE_MIN_SKIP_BYTES = 64 * 1024;

/** The latest output kept per job for the UI's live preview, separate from what the model reads. */
export const PREVIEW_BYTES = 32 * 1024;
/** Streaming UI updates during a wait come at most this often (Pi's bash tool: every 100 ms). */
export const UPDATE_INTERVAL_MS = 250;
/** While an absolute (`yield_until`) wait stays quiet, the UI is refreshed at most this often. */
export const LONG_WAIT_UPDATE_MS = 30_000;
/**
 * Jobs a session boundary stopped (or whose exit was unread) that a forked session, or the next
 * runtime of the same session, keeps so the model's next call on their ids hears what happened. One
 * registry's worth: the boundary's runtime never held more.
 */
export const HANDOVER_MAX_JOBS = MAX_JOBS;
/**
 * After a boundary's shutdown, how long exits still draining (100 ms of reading, then the log flush)
 * may take to become final before the handover; a job not final by then is not handed over.
 */
export const HANDOVER_SETTLE_MS = 500;
/** A parked runtime (after `/reload`) not adopted by the next extension instance within this time stops its jobs. */
export const RELOAD_ADOPTION_MS = 10_000;

/** Node's timers overflow past 2^31-1 ms (about 24.8 days); longer waits re-arm in chunks. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** On shutdown, time between SIGTERM to every job's group and SIGKILL to the survivors. */
export const SHUTDOWN_GRACE_MS = 1_000;

/** After SIGKILL at shutdown, how long to wait for the kernel to confirm the groups are gone. */
export const SHUTDOWN_KILL_CONFIRM_MS = 1_000;

/** How often a group's emptiness is re-checked while waiting for it (a condition poll, not a delay). */
export const GROUP_PROBE_INTERVAL_MS = 20;

/**
 * Set in every job's environment to `<runtime token>:<job id>`. Descendants inherit it wherever they
 * move, so shutdown finds (and stops) processes that left their job's process groups with `setsid`.
 */
export const JOB_MARKER_ENV = "PI_UNIFIED_EXEC_JOB";

/**
 * The host-death watchdog (`watchdog.sh`) and the startup sweep: time between SIGTERM and SIGKILL to
 * the groups of a Pi process that is gone (the script has the same second written in sh).
 */
export const WATCHDOG_KILL_GRACE_MS = 1_000;
/** After SIGKILL in the startup sweep, how long to wait for the kernel to confirm. */
export const WATCHDOG_KILL_CONFIRM_MS = 1_000;
/** Starts of a runtime's watchdog after the first, when it died while jobs ran: a broken system must not spin. */
export const WATCHDOG_RESTARTS = 3;
/**
 * An orderly shutdown waits this long at most for the dismissed watchdog to exit (it journals one
 * line and exits, a few ms), so nothing of ours runs or writes into the log directory once Pi is gone.
 * A loaded machine may not schedule the watchdog's shell for over a second (seen at a load of 15 on
 * 2 cores); the wait ends at its exit, so only such a machine pays more than milliseconds.
 */
export const WATCHDOG_STOP_WAIT_MS = 5_000;
/** A watchdog line that may wait (see watchdog.ts) waits for calls to pause, at the latest this long. */
export const WATCHDOG_DEFER_MS = 1_000;
/** Characters of a job's command kept in the registry file, for the sweep's notice. */
export const WATCHDOG_COMMAND_CHARS = 200;
/** Jobs named per earlier Pi process in the sweep's one-line notice (the rest are counted), and characters per command. */
export const SWEEP_NOTICE_JOBS = 5;
export const SWEEP_NOTICE_COMMAND_CHARS = 80;
/** The registry file is read only up to this size (the watchdog keeps it far smaller). */
export const WATCHDOG_REGISTRY_MAX_BYTES = 1024 * 1024;

/** Private log directories of runtimes whose Pi process is gone are removed this many days after their last write. */
export const LOG_RETENTION_DAYS = 7;
/** Overrides {@link LOG_RETENTION_DAYS}: a whole number of days, 0 keeps every directory. */
export const LOG_RETENTION_ENV = "PI_UNIFIED_EXEC_LOG_RETENTION_DAYS";

/**
 * Codex's token estimate: one token per 4 bytes of UTF-8, rounded up (Codex `APPROX_BYTES_PER_TOKEN`).
 * `original_token_count` and `max_output_tokens` use it, so the model reads the numbers it was trained on.
 */
export const APPROX_BYTES_PER_TOKEN = 4;

/**
 * Output budget of a Codex-format result when the model gives no `max_output_tokens` (Codex
 * `DEFAULT_MAX_OUTPUT_TOKENS`). It is also the cap on a larger request: Codex takes the smaller of the
 * request and the model's truncation policy, which is 10 000 tokens for the models trained on this tool.
 */
export const CODEX_MAX_OUTPUT_TOKENS = 10_000;

/**
 * Lines a PTY job's screen emulator keeps above the screen. The screen is what results show; a short
 * history costs ~0.4 MB per job at 120 columns, xterm's default of 1000 about ten times that.
 */
export const SCREEN_SCROLLBACK_LINES = 100;
/**
 * Output bytes handed to a job's emulator and not yet parsed. Small, so a flood never comes near
 * the emulator's own 50 MB limit (where its `write` throws) and a screen request waits for little.
 */
export const SCREEN_FEED_BYTES = 256 * 1024;
/** Largest piece handed to the emulator at once: it parses a piece without yielding (~3 ms at 20 MB/s). */
export const SCREEN_CHUNK_BYTES = 64 * 1024;
/**
 * Output bytes waiting for the emulator (which parses ~20 MB/s) beyond {@link SCREEN_FEED_BYTES}.
 * Past it, the oldest waiting bytes are skipped: a flood costs neither memory nor a screen request
 * more than ~1.25 MiB of parsing (~60 ms), and the screen shows the newest output.
 */
export const SCREEN_BACKLOG_BYTES = 1024 * 1024;
/**
 * Answers to terminal queries on their way into a PTY and not yet taken by the OS. An answer is a
 * few bytes; a program that floods queries without reading the answers loses the excess rather than
 * make Pi hold them (a real terminal would block it instead).
 */
export const SCREEN_REPLY_PENDING_BYTES = 64 * 1024;
/** Lines of a pipe job's output the sessions picker's "view" shows (a PTY job shows its screen). */
export const VIEW_LOG_LINES = 40;
/** How often the sessions picker's open view redraws a job's screen or output: live, at little cost. */
export const VIEW_REFRESH_MS = 500;

// In files of their own: input waits (SPEC §3a); conditional waits and jobs that speak up (§3a, §3c); listings and port scans (§3c).
export * from "./input-wait-limits.ts";
export * from "./pattern-limits.ts";
export * from "./scan-limits.ts";
