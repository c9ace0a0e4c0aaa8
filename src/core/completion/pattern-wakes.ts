import type { Clock } from "../shared/clock.ts";
import { PATTERN_WAKE_COOLDOWN_ENV } from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";
import type { NoticeLevel } from "./attention.ts";

/**
 * Least time between two pattern wakes of one job, in seconds, and its bounds: a server that logs an
 * error a second would otherwise start a turn a second. Matches in between are counted and named by
 * the next wake. `PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S` sets it (tests use 1).
 */
export const PATTERN_WAKE_COOLDOWN_S = 30;
const MIN_PATTERN_WAKE_COOLDOWN_S = 1;
const MAX_PATTERN_WAKE_COOLDOWN_S = 3_600;

/**
 * Pattern wakes of one job with no call of the model on it in between, after which the pattern
 * disarms itself (the last wake says so): a model that ignores a noisy pattern stops paying for it.
 */
export const PATTERN_WAKE_BUDGET = 10;

/** A pattern wake as the prompt names it: bounded metadata and one matched line, never other output. */
export interface PatternWakeJob {
  jobId: number;
  /** The pattern as the model wrote it. */
  pattern: string;
  /** The first line that matched since the job's previous pattern wake, rendered as the model reads output. */
  line: string;
  /** A person typed into the job: `line` is empty, the wake says a line matched without quoting it. */
  lineWithheld?: boolean;
  command: string;
  /** Lines that matched after `line`, before this wake went out. */
  more: number;
  /** This wake used up the budget: the pattern disarmed itself. */
  disarmed: boolean;
}

/** The pause between two pattern wakes of one job, from the environment (seconds, 1–3600), in ms. */
export function patternWakeCooldownMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = wholeNumber(env[PATTERN_WAKE_COOLDOWN_ENV]);
  const valid = seconds !== undefined && seconds >= MIN_PATTERN_WAKE_COOLDOWN_S && seconds <= MAX_PATTERN_WAKE_COOLDOWN_S;
  return (valid ? seconds : PATTERN_WAKE_COOLDOWN_S) * 1000;
}

interface PatternRecord {
  pattern: string;
  level: NoticeLevel;
  command: string;
  /** The first match not yet announced, and how many followed it. */
  first?: string;
  more: number;
  /** When the last wake of this record went out, unless the model called on the job since. */
  lastWake?: number;
  /** Wakes since the model last called on the job. */
  wakes: number;
  /** Waiting for the cooldown to end before it may go out. */
  cooldown?: unknown;
  /** A stop on purpose is under way: matches are ignored until it fails. */
  held: boolean;
  /** Where the output the matches waiting to be announced came from ends (a byte of the job's stream). */
  through: number;
  /** Where the output the last wake announced ends: a line ending there or before never wakes again. */
  announced: number;
}

/**
 * The `wake_on_pattern` side of the completion ledger, private to completion/: which job has
 * which pattern, the matches not yet announced, the cooldown between two wakes and the budget of
 * wakes without a call. It decides when a job's pattern wake is due (`ready`); the ledger
 * batches it with every other wake and sends it, so a match and an exit close together are one prompt.
 */
export class PatternWakes {
  private readonly records = new Map<number, PatternRecord>();

  constructor(
    private readonly clock: Clock,
    private readonly cooldownMs: number,
    /** A job's pattern wake may go out now (the ledger queues it at the decision point). */
    private readonly ready: (jobId: number) => void,
  ) {}

  /** Arms (or replaces) the job's pattern; setting it is a call of the model, so the budget and the cooldown start over. */
  arm(jobId: number, pattern: string, command: string, level: NoticeLevel = "wake"): void {
    const old = this.records.get(jobId);
    if (old?.cooldown !== undefined) this.clock.clearTimeout(old.cooldown);
    this.records.set(jobId, {
      pattern,
      level,
      command,
      more: 0,
      wakes: 0,
      held: false,
      through: old?.announced ?? 0,
      announced: old?.announced ?? 0,
    });
  }

  /** Disarms the job's pattern; false when none was armed. Matches not yet announced go with it. */
  disarm(jobId: number): boolean {
    const armed = this.records.has(jobId);
    this.forget(jobId);
    return armed;
  }

  patternOf(jobId: number): string | undefined {
    return this.records.get(jobId)?.pattern;
  }

  /** A stop on purpose is under way ({@link hold}). */
  isHeld(jobId: number): boolean {
    return this.records.get(jobId)?.held === true;
  }

  levelOf(jobId: number): NoticeLevel {
    return this.records.get(jobId)?.level ?? "wake";
  }

  /** Where the job's output was last announced up to (0 when never): those lines never wake again. */
  announcedThrough(jobId: number): number {
    return this.records.get(jobId)?.announced ?? 0;
  }

  /** A watched line matched (`count` lines in one piece of output ending at byte `end`, `line` the first). */
  hit(jobId: number, line: string, count: number, end = 0): void {
    const record = this.records.get(jobId);
    if (!record || record.held) return;
    record.through = Math.max(record.through, end);
    if (record.first === undefined) {
      record.first = line;
      record.more += count - 1;
    } else record.more += count;
    const due = record.lastWake === undefined ? 0 : record.lastWake + this.cooldownMs;
    const wait = due - this.clock.now();
    if (wait <= 0) {
      this.ready(jobId);
      return;
    }
    record.cooldown ??= this.clock.setTimeout(() => {
      record.cooldown = undefined;
      if (this.records.get(jobId) === record && record.first !== undefined) this.ready(jobId);
    }, wait);
  }

  /**
   * The job exited: no line will follow, so a match the cooldown or the exit's drain held back goes
   * out now, with the exit.
   */
  exited(jobId: number): void {
    const record = this.records.get(jobId);
    if (!record) return;
    if (record.cooldown !== undefined) this.clock.clearTimeout(record.cooldown);
    record.cooldown = undefined;
    if (record.first !== undefined && !record.held) this.ready(jobId);
  }

  /** Whether a match waits to be announced (the ledger asks before it sends). */
  pending(jobId: number): boolean {
    const record = this.records.get(jobId);
    return record !== undefined && record.first !== undefined && !record.held;
  }

  /**
   * The model called on the job: it reads those lines itself, so the count and the budget start
   * over, and the next match wakes at once (the cooldown guards a job nobody looks at, not the answer
   * to the model's own edit).
   */
  called(jobId: number): void {
    const record = this.records.get(jobId);
    if (!record) return;
    this.clearPending(record);
    record.wakes = 0;
    record.lastWake = undefined;
  }

  /** The wake that goes out now; the record counts it, and the budget's last one disarms the pattern. */
  take(jobId: number): PatternWakeJob | undefined {
    const record = this.records.get(jobId);
    if (!record || record.first === undefined || record.held) return undefined;
    record.wakes++;
    const disarmed = record.wakes >= PATTERN_WAKE_BUDGET;
    const wake: PatternWakeJob = {
      jobId,
      pattern: record.pattern,
      line: record.first,
      command: record.command,
      more: record.more,
      disarmed,
    };
    this.clearPending(record);
    record.announced = Math.max(record.announced, record.through);
    record.lastWake = this.clock.now();
    if (disarmed) this.forget(jobId);
    return wake;
  }

  /** A stop on purpose begins: what waits is dropped and matches are ignored; `restore` for a stop that failed. */
  hold(jobId: number): () => void {
    const record = this.records.get(jobId);
    if (!record) return () => {};
    this.clearPending(record);
    record.held = true;
    return () => {
      record.held = false;
    };
  }

  forget(jobId: number): void {
    const record = this.records.get(jobId);
    if (!record) return;
    if (record.cooldown !== undefined) this.clock.clearTimeout(record.cooldown);
    this.records.delete(jobId);
  }

  clear(): void {
    for (const jobId of [...this.records.keys()]) this.forget(jobId);
  }

  private clearPending(record: PatternRecord): void {
    record.first = undefined;
    record.more = 0;
    if (record.cooldown !== undefined) this.clock.clearTimeout(record.cooldown);
    record.cooldown = undefined;
  }
}
