import type { WakeBatch } from "./wake-types.ts";

/**
 * Batches whose send threw (a stale or not-yet-bound API), private to completion/: they wait for a
 * retry, and what the model learned meanwhile by a call (the exit in a result, the lines in a read,
 * the prompt it now saw), or what a stop dropped, leaves them before they go out.
 */
export class UnsentBatches {
  private batches: WakeBatch[] = [];

  push(batch: WakeBatch): void {
    this.batches.push(batch);
  }

  /** Every batch waiting, handed over for a retry (none wait afterwards). */
  takeAll(): WakeBatch[] {
    const batches = this.batches;
    this.batches = [];
    return batches;
  }

  /** Removes job `jobId`'s wake of `kind` from every waiting batch; a batch left with nothing goes. */
  withdraw(jobId: number, kind: "jobs" | "patterns" | "inputs" | "deaf"): void {
    const other = (wake: { jobId: number }) => wake.jobId !== jobId;
    this.batches = this.batches.filter((batch) => {
      if (kind === "jobs") batch.jobs = batch.jobs.filter(other);
      else if (kind === "patterns" && batch.patterns) {
        batch.patterns = batch.patterns.filter(other);
        if (batch.patterns.length === 0) delete batch.patterns;
      } else if (kind === "inputs" && batch.inputs) {
        batch.inputs = batch.inputs.filter(other);
        if (batch.inputs.length === 0) delete batch.inputs;
      } else if (kind === "deaf" && batch.deaf) {
        batch.deaf = batch.deaf.filter(other);
        if (batch.deaf.length === 0) delete batch.deaf;
      }
      return wakesIn(batch) > 0;
    });
  }

  /** Wakes in the waiting batches, those beyond the listed ones included. */
  get count(): number {
    return this.batches.reduce((sum, batch) => sum + wakesIn(batch), 0);
  }
}

function wakesIn(batch: WakeBatch): number {
  return batch.jobs.length + (batch.patterns?.length ?? 0) + (batch.inputs?.length ?? 0) + (batch.deaf?.length ?? 0) + batch.more;
}
