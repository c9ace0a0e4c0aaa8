import type { CompletionLedger, SetOnExitStatus } from "./completion/completion-ledger.ts";
import type { LinePattern } from "./conditions/until-pattern.ts";
import { InputWakeWatch } from "./input-wake-watch.ts";
import type { Job } from "./job/job.ts";
import { type JobReport, type NewsFields, newsFields } from "./job/job-snapshot.ts";
import type { DisarmedWake } from "./job/person-news.ts";
import type { JobRegistry } from "./job/registry.ts";

/** What `set_on_exit` changes: the exit wake, the pattern (`null`: disarm), or both. */
export interface WakeChange {
  onExit?: "none" | "wake";
  wakePattern?: LinePattern | null;
}

export type PatternStatus = "armed" | "disarmed" | "already_none" | "too_late";

export type WakeChangeResult = { found: false } | ({ found: true; onExit?: SetOnExitStatus; pattern?: PatternStatus } & NewsFields);

/**
 * What may wake the model about a runtime's jobs, as the model sets it (`on_exit`, `wake_on_pattern`,
 * `set_on_exit`): the ledger keeps each wake exactly once; this arms the job's side, the watch of its
 * lines, and says what became of each change.
 */
export class JobWakes {
  /** A job with a wake armed that waits for input says so once (SPEC §3e). */
  readonly inputs: InputWakeWatch;

  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: CompletionLedger<JobReport>,
  ) {
    this.inputs = new InputWakeWatch(registry, completions);
  }

  /** `on_exit: "wake"` on a job its call hands back. */
  armExit(jobId: number): void {
    this.completions.arm(jobId);
    this.inputs.poke();
  }

  /**
   * `set_on_exit` (`by` the model: its result tells what a person did to the job meanwhile, once), or
   * the sessions picker's disarm (`by` the user: told to the model in its next result on the job).
   * `found: false` for an id the runtime has never heard of or has forgotten.
   */
  change(jobId: number, change: WakeChange, by: "model" | "user" = "model"): WakeChangeResult {
    const job = this.registry.get(jobId);
    if (!job && !this.completions.knows(jobId)) return { found: false };
    const exited = job ? job.exit !== undefined : true;
    const onExit = change.onExit && this.completions.setOnExit(jobId, change.onExit, exited);
    if (onExit === "armed") this.inputs.poke();
    let pattern: PatternStatus | undefined;
    if (change.wakePattern === null) {
      job?.watchLines(undefined, { onHit: () => {} });
      pattern = this.completions.disarmPattern(jobId) ? "disarmed" : "already_none";
    } else if (change.wakePattern) {
      if (!job || exited) pattern = "too_late";
      else {
        this.armPattern(job, change.wakePattern);
        pattern = "armed";
      }
    }
    const disarmed: DisarmedWake[] = [
      ...(onExit === "disarmed" ? ["exit_wake" as const] : []),
      ...(pattern === "disarmed" ? ["wake_on_pattern" as const] : []),
    ];
    if (by === "user") for (const wake of disarmed) job?.holders.news.userDisarmed(wake);
    const news = by === "model" && job ? newsFields(job.holders.news.take()) : {};
    return { found: true, ...(onExit ? { onExit } : {}), ...(pattern ? { pattern } : {}), ...news };
  }

  /** Arms `pattern` on a running job: its later lines, while nobody holds it, may wake the model. */
  armPattern(job: Job, pattern: LinePattern): void {
    this.completions.armPattern(job.id, pattern.source, job.command);
    // A job a person typed into is never quoted (the ledger also withholds at sending): the line is not even kept.
    // A pattern too slow on this job's output is disarmed; the job's next result says so.
    job.watchLines(pattern, {
      onHit: (hit) => this.completions.patternHit(job.id, job.holders.typedInto ? "" : hit.line, hit.count, hit.end),
      judgedThrough: () => this.completions.patternAnnouncedThrough(job.id),
      onSuspend: () => this.completions.disarmPattern(job.id),
    });
    this.inputs.poke();
  }
}
