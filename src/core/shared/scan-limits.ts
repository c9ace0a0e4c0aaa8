/** How often listings, port scans and `until_listening` look at the operating system again (SPEC §3c, §3a), re-exported by `constants.ts`. */

/**
 * A listing reuses what it read of a running job (its listening addresses, whether it waits for
 * input) for this long while nothing of the job moved: no output, no input, no change of state, no
 * crossing of the input-wait quiet time. Reading a job costs a few /proc reads per process (64 jobs of
 * 10 processes: 2 000 reads, 50–400 ms on a busy machine); within a second, several listings of one
 * message, the picker and the compaction note cost nothing. What a job does silently (a bind with no
 * output, a read of stdin with no prompt) shows at most this late; `until_listening` never reuses.
 */
export const LISTING_FACTS_REUSE_MS = 1_000;

/**
 * macOS: `lsof` runs at most this often for the whole process (an `until_listening` wait asks every
 * 100 ms): `lsof` takes 50–500 ms there and blocks Pi's loop while it runs. A bind is seen within
 * about a second.
 */
export const LSOF_MIN_INTERVAL_MS = 1_000;

/**
 * macOS: and `lsof` runs again only once its previous run's cost is at most this share of the time
 * since it ended (a 400 ms run waits 4 s): slow `lsof` never takes more than a tenth of Pi's loop.
 */
export const LSOF_COST_SHARE = 0.1;

/**
 * A process whose number of descriptors did not change keeps what a scan read of them for 2 s,
 * doubled for each read in a row that found the same descriptors, up to this long: a long-lived idle
 * process (a shell, a `sleep`, a server between requests) costs one `stat` a scan instead of a
 * `readlink` per descriptor every 2 s. A socket that takes another descriptor's place at the same
 * count in such a process shows this late at most; a new descriptor changes the count and is read at
 * once, and `until_listening` trusts nothing.
 */
export const DESCRIPTORS_TRUSTED_MAX_MS = 8_000;

// `until_listening` (SPEC §3a).

/**
 * How often an `until_listening` wait reads the job's sockets: a server's bind is seen within about
 * this long, while one scan of one job (a few ms at most) costs a few percent of a core at worst.
 */
export const LISTEN_CHECK_MS = 100;

/**
 * During an `until_listening` wait, a socket of the job seen not listening is looked at again every
 * this long (otherwise after 1, 2, 4, then every 8 s): a server that binds before it listens, by
 * microseconds or by seconds, ends the wait about 0.3 s after its `listen`.
 */
export const LISTEN_RECHECK_MS = 200;

/** Highest TCP port `until_listening` accepts. */
export const MAX_LISTEN_PORT = 65_535;
