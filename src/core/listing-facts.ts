import type { InputWait } from "./input-wait/input-wait.ts";
import type { Job } from "./job/job.ts";
import { INPUT_WAIT_QUIET_MS, LISTING_FACTS_REUSE_MS } from "./shared/constants.ts";

/**
 * What a listing reads of a running job from the operating system: its listening addresses, and
 * whether it waits for input (probed only where asked: the picker does not show it).
 */
export interface JobFacts {
  listening: string[] | undefined;
  inputWait?: InputWait;
}

/** Reads the facts of `stale` (running jobs) now: one read of the process table for all of them. */
export type FactsProbe = (stale: readonly Job[], inputWait: boolean) => Map<number, JobFacts>;

/**
 * The facts of each running job as a listing last read them, reused by the next listing while they
 * are younger than {@link LISTING_FACTS_REUSE_MS} and nothing of the job moved since: not one byte of
 * output, no input sent or finished, the leader still running, the same side of the input-wait quiet
 * time. Anything else reads them again, for that job only. A finished job is never read (its facts
 * are its exit). Reading 64 jobs of 10 processes costs some 2 000 reads of /proc; reusing them costs
 * nothing, so several listings in a row, the picker's refresh and the compaction note share one read.
 */
export class ListingFacts {
  private readonly known = new WeakMap<Job, { at: number; stamp: string; facts: JobFacts }>();

  constructor(private readonly reuseMs: number = LISTING_FACTS_REUSE_MS) {}

  /** The facts of every job in `running` at `now`: reused where still true, read through `probe` for the others. */
  of(running: readonly Job[], now: number, probe: FactsProbe, inputWait = true): Map<number, JobFacts> {
    const result = new Map<number, JobFacts>();
    const stale: Job[] = [];
    for (const job of running) {
      const known = this.known.get(job);
      const usable = known && now - known.at < this.reuseMs && known.stamp === stampOf(job, now) && (!inputWait || known.facts.inputWait);
      if (usable) result.set(job.id, known.facts);
      else stale.push(job);
    }
    if (stale.length === 0) return result;
    const read = probe(stale, inputWait);
    for (const job of stale) {
      const facts = read.get(job.id) ?? { listening: undefined };
      result.set(job.id, facts);
      this.known.set(job, { at: now, stamp: stampOf(job, now), facts });
    }
    return result;
  }
}

/** Changes whenever the job moves: a byte of output, a send's start or end (what the port scan trusts, listening.ts). */
export function motionOf(job: Job): string {
  return `${job.outputBytesTotal}:${job.stdin.movements}`;
}

/** What of a job, when it moves, makes its facts stale: its output, its input, its leader, its quiet. */
function stampOf(job: Job, now: number): string {
  const quiet = job.quietMs(now) >= INPUT_WAIT_QUIET_MS;
  return `${motionOf(job)}:${job.leaderExited}:${quiet}`;
}
