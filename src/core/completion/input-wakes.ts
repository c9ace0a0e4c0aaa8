/**
 * Input wakes (SPEC §3e), private to completion/: a job with a wake armed that has waited for input,
 * untouched, long enough. The runtime decides when one is due (input-wait/input-wake-rule.ts); this
 * keeps the ones queued at the decision point, so they go out with exits and pattern wakes as one
 * prompt, and drops one the model's call on the job, its exit or a stop makes moot.
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

/** The input (or deaf-server) wakes due and not yet decided, one per job (the decision point asks for them by job). */
export class InputWakes<Wake extends { jobId: number } = InputWakeJob> {
  private readonly pending = new Map<number, Wake>();

  add(wake: Wake): void {
    this.pending.set(wake.jobId, wake);
  }

  has(jobId: number): boolean {
    return this.pending.has(jobId);
  }

  drop(jobId: number): void {
    this.pending.delete(jobId);
  }

  /** The job's wake as it goes out now; none waits afterwards. */
  take(jobId: number): Wake | undefined {
    const wake = this.pending.get(jobId);
    this.pending.delete(jobId);
    return wake;
  }

  clear(): void {
    this.pending.clear();
  }
}
