/**
 * Input wakes (SPEC §3e), private to completion/: a job with a wake armed that has waited for input,
 * untouched, long enough. The runtime decides when one is due (conditions/input-wake-rule.ts); this
 * keeps the ones waiting for the coordinator's next batch, so they go out with exits and pattern
 * wakes as one prompt, and drops one the model's call on the job, its exit or a stop makes moot.
 */

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
}

export class InputWakes {
  private readonly pending = new Map<number, InputWakeJob>();

  constructor(
    /** Whether the job's input wake may go out now (a wake armed, no call holding the job). */
    private readonly eligible: (jobId: number) => boolean,
    /** A wake waits: the coordinator starts its batch. */
    private readonly ready: () => void,
  ) {}

  add(wake: InputWakeJob): void {
    if (!this.eligible(wake.jobId)) return;
    this.pending.set(wake.jobId, wake);
    this.ready();
  }

  drop(jobId: number): void {
    this.pending.delete(jobId);
  }

  /** The wakes that go out in this batch (re-checked now); none wait afterwards. */
  take(): InputWakeJob[] {
    const wakes = [...this.pending.values()].filter((wake) => this.eligible(wake.jobId));
    this.pending.clear();
    return wakes;
  }

  clear(): void {
    this.pending.clear();
  }

  get waiting(): number {
    return this.pending.size;
  }
}
