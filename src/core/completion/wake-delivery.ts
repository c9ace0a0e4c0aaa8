/**
 * How the wakes the decision point took reach Pi, private to completion/: one batch per decision (each
 * kind's list bounded, the rest counted), the line of a job a person typed into withheld at the last
 * moment, and a batch whose send threw kept for a retry, trimmed by what the model learned meanwhile.
 */
import type { WakeJob } from "../job/job-snapshot.ts";
import type { TakenWakes } from "./decision-point.ts";
import type { PatternWakeJob } from "./pattern-wakes.ts";

/** Jobs named in one wake prompt, per kind; the rest are counted (the prompt must stay small). */
const WAKE_MAX_LISTED = 16;

/** An input wake as the prompt names it: bounded metadata and the job's last visible line, never other output. */
export interface InputWakeJob {
  jobId: number;
  command: string;
  /** The job's last visible line (the prompt); absent when withheld. */
  line?: string;
  /** A person typed into the job: its output is not quoted. */
  withheld?: true;
  /** How long it had waited for input when the wake was due. */
  waitedMs: number;
  /** Its terminal hides what is typed: the answer is the person's (ask_user). */
  secret?: true;
}

/** A server gone deaf (SPEC §3c), as the notice names it: what it listened on and how long ago it closed. */
export interface DeafWakeJob {
  jobId: number;
  command: string;
  was: string[];
  closedMs: number;
}

/** One prompt's notices: each kind's list holds at most {@link WAKE_MAX_LISTED}, `more` counts the rest. */
export interface WakeBatch {
  jobs: WakeJob[];
  more: number;
  patterns?: PatternWakeJob[];
  inputs?: InputWakeJob[];
  deaf?: DeafWakeJob[];
  /** How many of these the turn budget held back (they would have started turns of their own). */
  held?: number;
  /** It rides with a turn something else started: none of it started one. */
  nextTurn?: true;
}

/**
 * The kinds of notice, by the list of a batch they go to, in its order. A new kind adds a record here,
 * a list to `WakeBatch`, and its `eligible`, `level` (`followingLevel` for one that follows the
 * exit's) and `take` in the ledger's constructor.
 */
export interface WakeRecords extends Record<string, unknown> {
  jobs: WakeJob;
  patterns: PatternWakeJob;
  inputs: InputWakeJob;
  deaf: DeafWakeJob;
}

/** Delivers one batch. A synchronous throw means "not delivered": the batch is retried later. */
export type WakeSender = (batch: WakeBatch) => void;

export class WakeDelivery {
  private sender: WakeSender | undefined;
  /** Batches whose send threw (a stale or not-yet-bound API), waiting for a retry. */
  private unsent: WakeBatch[] = [];

  /** `unquotable`: a person typed into the job (asked as each batch is handed over). */
  constructor(private readonly unquotable: (jobId: number) => boolean) {}

  /** Binds delivery (a new Pi API after reload), or unbinds it (`undefined`: batches wait). */
  bind(sender: WakeSender | undefined): void {
    this.sender = sender;
  }

  /** Sends what a decision took as one batch that starts a turn. */
  send(taken: TakenWakes<WakeRecords>): void {
    this.deliver(batchOf(taken));
  }

  /** What a decision took, as the batch that rides with a run starting now (handed to Pi by the caller). */
  forTurn(taken: TakenWakes<WakeRecords>): WakeBatch {
    return withheldLines({ ...batchOf(taken), nextTurn: true }, this.unquotable);
  }

  /** Sends again what failed to send synchronously. */
  retry(): void {
    const batches = this.unsent;
    this.unsent = [];
    for (const batch of batches) this.deliver(batch);
  }

  /** Removes the job's wakes from `lists` of every batch waiting for a retry; a batch left with nothing goes. */
  withdraw(jobId: number, ...lists: ("jobs" | "patterns" | "inputs" | "deaf")[]): void {
    this.unsent = this.unsent.filter((batch) => {
      for (const list of lists) {
        const kept = (batch[list] as { jobId: number }[] | undefined)?.filter((wake) => wake.jobId !== jobId) ?? [];
        if (list === "jobs" || kept.length > 0) Object.assign(batch, { [list]: kept });
        else delete batch[list];
      }
      return wakesIn(batch) > 0;
    });
  }

  /** Wakes in the batches waiting for a retry, those beyond the listed ones included. */
  get waiting(): number {
    return this.unsent.reduce((sum, batch) => sum + wakesIn(batch), 0);
  }

  /** Shutdown: nothing waiting is sent. */
  clear(): void {
    this.unsent = [];
  }

  private deliver(batch: WakeBatch): void {
    try {
      if (!this.sender) throw new Error("no sender bound");
      this.sender(withheldLines(batch, this.unquotable));
    } catch {
      // Only a synchronous failure is observable here.
      this.unsent.push(batch);
    }
  }
}

/** Each kind's list bounded, the rest counted. */
function batchOf({ jobs, patterns, inputs, deaf, held }: TakenWakes<WakeRecords>): WakeBatch {
  const more = [jobs, patterns, inputs, deaf].reduce((sum, list) => sum + Math.max(0, list.length - WAKE_MAX_LISTED), 0);
  return {
    jobs: jobs.slice(0, WAKE_MAX_LISTED),
    more,
    ...(patterns.length > 0 ? { patterns: patterns.slice(0, WAKE_MAX_LISTED) } : {}),
    ...(inputs.length > 0 ? { inputs: inputs.slice(0, WAKE_MAX_LISTED) } : {}),
    ...(deaf.length > 0 ? { deaf: deaf.slice(0, WAKE_MAX_LISTED) } : {}),
    ...(held > 0 ? { held } : {}),
  };
}

function wakesIn(batch: WakeBatch): number {
  return batch.jobs.length + (batch.patterns?.length ?? 0) + (batch.inputs?.length ?? 0) + (batch.deaf?.length ?? 0) + batch.more;
}

/** `batch` with the line of every pattern or input wake of an `unquotable` job withheld (whenever the wake was decided). */
function withheldLines(batch: WakeBatch, unquotable: (jobId: number) => boolean): WakeBatch {
  const quoted = (wake: { jobId: number }) => unquotable(wake.jobId);
  if (!batch.patterns?.some(quoted) && !batch.inputs?.some(quoted)) return batch;
  const patterns = batch.patterns?.map((wake) => (quoted(wake) ? { ...wake, line: "", lineWithheld: true } : wake));
  const unquoted = ({ line: _line, ...wake }: InputWakeJob): InputWakeJob => ({ ...wake, withheld: true });
  const inputs = batch.inputs?.map((wake) => (quoted(wake) ? unquoted(wake) : wake));
  return { ...batch, ...(patterns ? { patterns } : {}), ...(inputs ? { inputs } : {}) };
}
