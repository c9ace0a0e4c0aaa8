import { aliveGroups } from "../processes/process-group.ts";
import { descendantsOf, livingPids } from "../processes/process-table.ts";
import { GROUP_PROBE_INTERVAL_MS, KILL_GRACE_MS } from "../shared/constants.ts";

/** After SIGKILL, how long a stop waits for the kernel to confirm before it reports `cleanup: pending`. */
const KILL_CONFIRM_MS = 2_000;

/**
 * Evidence of a stop. `cleanup`: `pending` when not even the leader's exit was seen; `confirmed` when
 * the groups are proven empty and every descendant seen before the signal is gone; else `unconfirmed`.
 */
export interface Termination {
  signal: NodeJS.Signals;
  escalated: boolean;
  cleanup: "pending" | "unconfirmed" | "confirmed";
  /** Descendants seen before the signal that are still alive (they escaped the process group). */
  survivors: number[];
  /** Why a signal could not be sent; the job may still be running. */
  failure?: string;
}

/** What a stop needs of a job. */
export interface Stoppable {
  readonly pid: number | undefined;
  /** The leader has exited (its last output may still be draining). */
  readonly leaderExited: boolean;
  /** Set once the exit is final. */
  readonly exit: unknown;
  groups(): number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits up to `timeoutMs` for the exit to be final and every group of the job to be empty. */
async function gone(job: Stoppable, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (job.exit !== undefined && aliveGroups(job.groups()).length === 0) return true;
    if (performance.now() >= deadline) return false;
    await sleep(Math.min(GROUP_PROBE_INTERVAL_MS, Math.max(1, deadline - performance.now())));
  }
}

/**
 * Stops a job: `signal` to its groups (`signalGroups` throws when it cannot), SIGKILL after
 * {@link KILL_GRACE_MS} if anything is left, then a bounded wait for the kernel to confirm. A signal
 * that cannot be sent is a failure in the report, not a throw.
 */
export async function stopJob(
  job: Stoppable,
  signal: NodeJS.Signals,
  signalGroups: (signal: NodeJS.Signals) => void,
): Promise<Termination> {
  // Seen before the signal, so a descendant that escapes the group (setsid) can still be accounted for.
  const descendants = job.pid !== undefined && !job.leaderExited ? descendantsOf(job.pid) : [];
  let failure: string | undefined;
  const send = (sig: NodeJS.Signals) => {
    try {
      signalGroups(sig);
    } catch (error) {
      failure ??= `${sig} could not be sent: ${(error as Error).message}`;
    }
  };
  send(signal);
  let escalated = false;
  if (signal !== "SIGKILL" && !failure && !(await gone(job, KILL_GRACE_MS))) {
    send("SIGKILL");
    escalated = true;
  }
  const confirmedGone = failure ? false : await gone(job, KILL_CONFIRM_MS);
  const survivors = livingPids(descendants);
  const cleanup =
    job.exit === undefined
      ? "pending"
      : confirmedGone && survivors.length === 0 && process.platform !== "win32"
        ? "confirmed"
        : "unconfirmed";
  return { signal, escalated, cleanup, survivors, ...(failure ? { failure } : {}) };
}
