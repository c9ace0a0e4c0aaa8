import type { CompletionLedger } from "./completion/completion-ledger.ts";
import type { Job, StepResult } from "./job/job.ts";
import {
  type JobListing,
  type JobReport,
  type JobSnapshot,
  type KillReport,
  type SlotUse,
  type SnapshotContext,
  snapshotOf,
} from "./job/job-snapshot.ts";
import type { Termination } from "./job/job-stop.ts";
import type { JobRegistry } from "./job/registry.ts";
import type { ShownPart } from "./output/shown-part.ts";
import { aliveGroups } from "./processes/process-group.ts";
import { WARN_JOBS } from "./shared/constants.ts";
import type { TrackedJobs } from "./supervision/tracked-jobs.ts";

/** What a call's report needs beyond the job's step. */
export type CallStep = StepResult & { window: JobReport["window"]; startMono: number; conditional: boolean };

/**
 * Every report a runtime returns, each built on one {@link JobSnapshot}: a call's, a kill's, a
 * listing's. A report that carries an exit also settles what carrying it means: the job leaves the
 * registry, and a listing or a kill observes the exit for exactly-once completion.
 */
export class JobReports {
  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: CompletionLedger<JobReport>,
    private readonly tracked: TrackedJobs,
  ) {}

  snapshot(job: Job, extra: Omit<SnapshotContext, "wakeArmed"> = {}): JobSnapshot {
    return snapshotOf(job, { ...extra, wakeArmed: this.completions.isArmed(job.id) });
  }

  /** A call's report; it removes a job whose exit it carries (a cancelled call carries none). */
  call(job: Job, step: CallStep): JobReport {
    const cancelled = step.end === "aborted";
    if (job.exit && !cancelled) this.registry.remove(job.id);
    const slots = this.slotUse();
    const inputWait = job.exit ? undefined : job.inputWait();
    return {
      job: this.snapshot(job, { hideExit: cancelled }),
      window: step.window,
      waitEnd: step.end,
      wallMs: performance.now() - step.startMono,
      output: step.output ?? { text: "", omittedBytes: 0 },
      ...(step.conditional ? { conditional: true } : {}),
      ...(step.matchedLine !== undefined ? { matchedLine: step.matchedLine } : {}),
      ...(step.screen ? { screen: step.screen } : {}),
      ...(step.input ? { input: step.input } : {}),
      ...(inputWait?.likely ? { inputWait } : {}),
      ...(slots ? { slots } : {}),
      ...(cancelled ? { cancelled } : {}),
    };
  }

  /** `consume`: the result carries the exit and the unread output (the model's kill of a registered job). */
  kill(
    job: Job,
    startMono: number,
    termination: Termination,
    options: { alreadyExited: boolean; consume: boolean; callId: string | undefined; shown: ShownPart | undefined },
  ): KillReport {
    if (job.exit && options.consume) {
      this.registry.remove(job.id);
      // The kill's result reports the exit: it observes it like a poll would.
      this.completions.observed(options.callId, { kind: "kill", jobId: job.id, exitCode: job.exit.exitCode, signal: job.exit.signal });
    }
    const output = options.consume ? job.takeOutput(options.shown) : { text: "", omittedBytes: 0 };
    return { job: this.snapshot(job), termination, alreadyExited: options.alreadyExited, wallMs: performance.now() - startMono, output };
  }

  /**
   * Every registered job, and every reported job whose groups linger. Exited jobs are listed once
   * more and then forgotten, unless a call is attached to them (that call reports the exit).
   */
  list(callId: string | undefined): JobListing[] {
    this.tracked.prune();
    const now = performance.now();
    const registered = this.registry.jobs();
    const listing: JobListing[] = registered.map((job) => {
      const inputWait = job.exit ? undefined : job.inputWait();
      return {
        ...this.snapshot(job, { now, lingering: job.exit !== undefined && aliveGroups(job.groups()).length > 0 }),
        ...(inputWait?.likely ? { inputWait } : {}),
      };
    });
    for (const job of this.tracked.lingering(registered))
      listing.push({ ...this.snapshot(job, { now, lingering: true }), alreadyReported: true });
    for (const job of registered) {
      if (!job.exit || job.attached) continue;
      this.registry.remove(job.id);
      // Listing an exit reports it: it consumes a wake not yet sent.
      this.completions.observed(callId, { kind: "list", jobId: job.id, exitCode: job.exit.exitCode, signal: job.exit.signal });
    }
    return listing;
  }

  /** Running jobs, oldest first, as the footer and the sessions picker show them. */
  live(): JobSnapshot[] {
    const now = performance.now();
    return this.registry
      .jobs()
      .filter((job) => !job.exit)
      .map((job) => this.snapshot(job, { now }));
  }

  private slotUse(): SlotUse | undefined {
    const used = this.registry.size;
    return used >= WARN_JOBS ? { used, capacity: this.registry.capacity } : undefined;
  }
}
