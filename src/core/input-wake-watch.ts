import type { CompletionLedger } from "./completion/completion-ledger.ts";
import { InputWakeRule, inputWakeMs } from "./conditions/input-wake-rule.ts";
import type { Job } from "./job/job.ts";
import type { JobReport } from "./job/job-snapshot.ts";
import type { JobRegistry } from "./job/registry.ts";

/**
 * How often jobs with a wake armed are probed for an input wait: the probe reads a few /proc files
 * per process of those jobs only, and a wake 1 s late on a 30 s rule does not matter.
 */
const INPUT_WAKE_PROBE_MS = 1_000;
/** Characters of the prompt line an input wake quotes: one line, enough to answer it. */
export const INPUT_WAKE_LINE_CHARS = 300;

/**
 * The input wake's probe (SPEC §3e): while some job of the runtime has a wake armed (`on_exit: "wake"`
 * or a `wake_on_pattern`), every {@link INPUT_WAKE_PROBE_MS} those jobs only — not held by a call or
 * the user — are asked whether they wait for input (a few /proc files per process of the job, the
 * same probe as `input_wait`). A job that has waited long enough ({@link InputWakeRule}) sends one
 * wake through the completion ledger, with its last visible line unless a person typed into it.
 * The timer stops by itself once no job has a wake armed, and starts again when one is armed.
 */
export class InputWakeWatch {
  private timer: NodeJS.Timeout | undefined;
  private readonly rules = new WeakMap<Job, InputWakeRule>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: CompletionLedger<JobReport>,
    private readonly afterMs: number | undefined = inputWakeMs(),
    private readonly intervalMs: number = INPUT_WAKE_PROBE_MS,
  ) {}

  /** A wake was armed: probe while some job has one (nothing when input wakes are off). */
  poke(): void {
    if (this.afterMs === undefined || this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** One probe of every job with a wake armed; `now` is monotonic ms. */
  tick(now: number = performance.now()): void {
    const jobs = this.registry.jobs().filter((job) => !job.leaderExited && this.completions.wantsWakes(job.id));
    if (jobs.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    for (const job of jobs) this.check(job, now);
  }

  private check(job: Job, now: number): void {
    let rule = this.rules.get(job);
    if (!rule) {
      rule = new InputWakeRule(this.afterMs!);
      this.rules.set(job, rule);
    }
    const held = job.attached !== undefined || job.holders.userTyping;
    let tail = "";
    const probe = () => {
      tail = job.previewText();
      return waits(job, tail);
    };
    if (!rule.observe(now, held, job.outputBytesTotal, probe)) return;
    // The fact that a person typed into the job (i35-typing keeps it on the job): its output is never quoted then.
    const withheld = job.holders.typedInto;
    this.completions.inputWaits({
      jobId: job.id,
      command: job.command,
      waitedMs: this.afterMs!,
      ...(withheld ? { withheld: true as const } : { line: lastVisibleLine(tail) }),
    });
  }

  /** Asked by the decision point as the job's wake goes out: it still waits at the prompt the wake names. */
  stillWaits(jobId: number): boolean {
    const job = this.registry.get(jobId);
    const rule = job && this.rules.get(job);
    if (!job || !rule) return false;
    return rule.stillDue(job.outputBytesTotal, () => waits(job, job.previewText()));
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
