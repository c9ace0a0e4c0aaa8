/**
 * The wakes the model sets on a runtime's jobs (`on_exit`, `wake_on_pattern`, `set_on_exit`), on the
 * jobs' side: the ledger keeps each wake exactly once; this arms a job's line watch with its pattern,
 * probes the jobs that may wake for input, and says what became of each change.
 */
import { InputWakeRule, inputWakeMs } from "../input-wait/input-wake-rule.ts";
import type { Job } from "../job/job.ts";
import type { DisarmedWake } from "../job/job-holders.ts";
import { type JobReport, type NewsFields, newsFields } from "../job/job-snapshot.ts";
import type { JobRegistry } from "../job/registry.ts";
import type { WakePattern } from "../request/request.ts";
import type { NoticeLevel } from "./attention.ts";
import type { CompletionLedger, SetOnExitStatus } from "./completion-ledger.ts";

/**
 * How often jobs with a wake armed are probed for an input wait: the probe reads a few /proc files
 * per process of those jobs only, and a wake 1 s late on a 30 s rule does not matter.
 */
const INPUT_WAKE_PROBE_MS = 1_000;
/** Characters of the prompt line an input wake quotes: one line, enough to answer it. */
export const INPUT_WAKE_LINE_CHARS = 300;

/** What `set_on_exit` changes: the exit wake's level, the pattern (`null`: disarm), or both. */
export interface WakeChange {
  onExit?: "none" | NoticeLevel;
  wakePattern?: WakePattern | null;
}

export type PatternStatus = "armed" | "disarmed" | "already_none" | "too_late";

export type WakeChangeResult = { found: false } | ({ found: true; onExit?: SetOnExitStatus; pattern?: PatternStatus } & NewsFields);

export class JobWakes {
  /** The input probe's timer: runs only while some job has a wake armed (SPEC §3e). */
  private timer: NodeJS.Timeout | undefined;
  private readonly rules = new WeakMap<Job, InputWakeRule>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: CompletionLedger<JobReport>,
    private readonly inputAfterMs: number | undefined = inputWakeMs(),
    private readonly probeMs: number = INPUT_WAKE_PROBE_MS,
  ) {}

  /** `on_exit` (`wake` or `next_turn`) on a job its call hands back. */
  armExit(jobId: number, level: NoticeLevel): void {
    this.completions.arm(jobId, level);
    this.watchInputs();
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
    if (onExit === "armed") this.watchInputs();
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

  /** Arms `pattern` on a running job: its later lines, while nobody holds it, may tell the model. */
  armPattern(job: Job, { regex, level }: WakePattern): void {
    this.completions.armPattern(job.id, regex.source, job.command, level);
    // A job a person typed into is never quoted (the ledger also withholds at sending): the line is not even kept.
    // A pattern too slow on this job's output is disarmed; the job's next result says so.
    job.watchLines(regex, {
      onHit: (hit) => this.completions.patternHit(job.id, job.holders.typedInto ? "" : hit.line, hit.count, hit.end),
      judgedThrough: () => this.completions.patternAnnouncedThrough(job.id),
      onSuspend: () => this.completions.disarmPattern(job.id),
    });
    this.watchInputs();
  }

  /**
   * Asked by the decision point as the job's input wake goes out: nobody holds the job (a person typing
   * into a hidden prompt prints nothing, so it would still look waiting) and it still waits at the prompt
   * the wake names.
   */
  stillWaitsForInput(jobId: number): boolean {
    const job = this.registry.get(jobId);
    const rule = job && this.rules.get(job);
    if (!job || !rule || job.attached !== undefined || job.holders.userTyping) return false;
    return rule.stillDue(job.outputBytesTotal, () => waits(job, job.previewText()));
  }

  /** A wake was armed: the input probe runs while some job has one (never when input wakes are off). */
  private watchInputs(): void {
    if (this.inputAfterMs === undefined || this.timer) return;
    this.timer = setInterval(() => this.probeInputs(this.inputAfterMs!), this.probeMs);
    this.timer.unref();
  }

  /**
   * One probe every {@link INPUT_WAKE_PROBE_MS} of the jobs with a wake armed and their leader
   * running, not held by a call or the user: do they wait for input (the same probe as
   * `input_wait`)? One that waited long enough ({@link InputWakeRule}) sends one wake, its last
   * visible line unless a person typed into it. The timer stops once no job has a wake armed.
   */
  private probeInputs(afterMs: number, now: number = performance.now()): void {
    const jobs = this.registry.jobs().filter((job) => !job.leaderExited && this.completions.wantsWakes(job.id));
    if (jobs.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    for (const job of jobs) this.probeInput(job, now, afterMs);
  }

  private probeInput(job: Job, now: number, afterMs: number): void {
    let rule = this.rules.get(job);
    if (!rule) {
      rule = new InputWakeRule(afterMs);
      this.rules.set(job, rule);
    }
    const held = job.attached !== undefined || job.holders.userTyping;
    let tail = "";
    const probe = () => {
      tail = job.previewText();
      return waits(job, tail);
    };
    if (!rule.observe(now, held, job.outputBytesTotal, probe)) return;
    const withheld = job.holders.typedInto;
    const wake = {
      jobId: job.id,
      command: job.command,
      waitedMs: afterMs,
      ...(withheld ? { withheld: true as const } : { line: lastVisibleLine(tail) }),
    };
    // The terminal is read as the wake is due, without holding the loop; the ledger re-checks the wake as it goes out.
    void job.hidesTyping().then((hidden) => this.completions.inputWaits(hidden ? { ...wake, secret: true } : wake));
  }
}

/** The job waits for input with `tail` (its preview) as the output so far. */
function waits(job: Job, tail: string): boolean {
  return job.inputWait(tail.slice(tail.lastIndexOf("\n") + 1)).likely;
}

/** The last line of `text` with something visible on it, its end kept when it is long (a prompt ends the line). */
export function lastVisibleLine(text: string): string {
  const lines = text.split("\n");
  let line = "";
  for (let i = lines.length - 1; i >= 0 && !line; i--) line = lines[i]!.trim();
  return line.length > INPUT_WAKE_LINE_CHARS ? `…${line.slice(-(INPUT_WAKE_LINE_CHARS - 1))}` : line;
}
