/**
 * The one place a notice is decided, for every kind (an exit, a match, a wait for input, a server
 * gone deaf): notices are queued here by kind and job, and leave only from {@link flush} or
 * {@link takeForTurn}, where each is re-checked by its kind (`eligible`) and taken (`take`) in the
 * same synchronous step.
 * - While the host runs, nothing goes out: Pi's queues cannot be withdrawn, so a notice handed over
 *   during a run could be read by a later call of the same run and still arrive.
 * - When the run settles, or after the debounce window when the host is idle, what is due goes out
 *   as one batch — if one of them is a `wake`; `next_turn` notices alone stay queued.
 * - A run starting takes every notice still due, whatever its level: it rides with that run.
 * - A kind unschedules a job whose notice is no longer due; one still queued but no longer eligible
 *   is dropped at the next decision.
 */
import type { Clock } from "../shared/clock.ts";
import type { DecidedLevel } from "./attention.ts";

/** One kind of notice: what the decision point asks of it. */
export interface WakeKind<T> {
  /** Still due: armed, unobserved, the job not stopped, the line not shown (re-checked at every decision). */
  eligible(jobId: number): boolean;
  /** How it goes out now (asked at each decision while it waits; once `held`, it stays so until taken). */
  level(jobId: number): DecidedLevel;
  /** The notice as the prompt names it, counted as sent by the kind; undefined: nothing to say after all. */
  take(jobId: number): T | undefined;
}

export type WakeKinds<Records> = { [K in keyof Records]: WakeKind<Records[K]> };
/** What one decision took: each kind's notices, and how many of them the turn budget held. */
export type TakenWakes<Records> = { [K in keyof Records]: Records[K][] } & { held: number };
type Due<Records> = { kind: keyof Records; jobId: number; level: DecidedLevel };

export class DecisionPoint<Records extends Record<string, unknown>> {
  /** Queued notices by kind, in order: job → whether the turn budget held it. */
  private readonly queued = new Map<keyof Records, Map<number, boolean>>();
  /** A run was reported started and has not settled. */
  private running = false;
  private timer: unknown;

  constructor(
    private readonly kinds: WakeKinds<Records>,
    private readonly clock: Clock,
    private readonly debounceMs: number,
    /** Delivers a batch that starts a turn (never called with nothing). */
    private readonly send: (taken: TakenWakes<Records>) => void,
  ) {
    for (const kind of Object.keys(kinds)) this.queued.set(kind, new Map());
  }

  /** Queues the job's notice of `kind` for the next decision (once); a notice already queued is decided again. */
  schedule(kind: keyof Records, jobId: number): void {
    const queue = this.queued.get(kind)!;
    if (!queue.has(jobId)) queue.set(jobId, false);
    this.startDebounce();
  }

  unschedule(kind: keyof Records, jobId: number): void {
    this.queued.get(kind)!.delete(jobId);
  }

  /** A run of the host started: notices wait for it to settle. */
  runStarted(): void {
    this.running = true;
  }

  /** The run settled (the host is idle): what waits is decided now. */
  runSettled(): void {
    this.running = false;
    if (this.count > 0) this.flush();
  }

  /** A run is starting: every notice still due rides with it, whatever its level; undefined when none is. */
  takeForTurn(): TakenWakes<Records> | undefined {
    this.stopDebounce();
    return this.take(this.due());
  }

  get held(): boolean {
    return this.running;
  }

  /** Notices queued and not yet decided. */
  get count(): number {
    let count = 0;
    for (const queue of this.queued.values()) count += queue.size;
    return count;
  }

  /** Queued notices the turn budget holds for the next turn, or would if decided now (during a run). */
  get heldByBudget(): number {
    let count = 0;
    for (const [kind, queue] of this.queued)
      for (const [jobId, held] of queue) if (held || this.kinds[kind].level(jobId) === "held") count++;
    return count;
  }

  /** Forgets everything queued (shutdown). */
  clear(): void {
    for (const queue of this.queued.values()) queue.clear();
    this.stopDebounce();
  }

  private startDebounce(): void {
    if (this.timer === undefined && !this.running) this.timer = this.clock.setTimeout(() => this.flush(), this.debounceMs);
  }

  private stopDebounce(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The decision point: drop what is no longer due, and if a `wake` is due send everything due, as one batch. */
  private flush(): void {
    this.stopDebounce();
    if (this.running) return;
    const due = this.due();
    if (!due.some((notice) => notice.level === "wake")) return;
    const taken = this.take(due);
    if (taken) this.send(taken);
  }

  /** The queued notices still eligible, with the level each goes out at now; the others leave the queue. */
  private due(): Due<Records>[] {
    const due: Due<Records>[] = [];
    for (const [kind, queue] of this.queued) {
      for (const [jobId, held] of queue) {
        if (!this.kinds[kind].eligible(jobId)) {
          queue.delete(jobId);
          continue;
        }
        const level = held ? "held" : this.kinds[kind].level(jobId);
        queue.set(jobId, level === "held");
        due.push({ kind, jobId, level });
      }
    }
    return due;
  }

  /** Takes `due` out of the queues in the same step as its re-check; undefined when nothing was said. */
  private take(due: Due<Records>[]): TakenWakes<Records> | undefined {
    const taken = { held: 0 } as TakenWakes<Records>;
    for (const kind of this.queued.keys()) (taken as Record<keyof Records, unknown[]>)[kind] = [];
    let any = false;
    for (const { kind, jobId, level } of due) {
      this.queued.get(kind)!.delete(jobId);
      const notice = this.kinds[kind].take(jobId);
      if (notice === undefined) continue;
      (taken[kind] as unknown[]).push(notice);
      if (level === "held") taken.held++;
      any = true;
    }
    return any ? taken : undefined;
  }
}
