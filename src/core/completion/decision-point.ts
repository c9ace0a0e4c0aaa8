/**
 * The one place a wake is decided, for every kind (an exit, a match, a wait for input): wakes are
 * queued here by kind and job, and go out only from {@link flush}, where each is re-checked by its
 * kind (`eligible`) and taken (`take`) in the same synchronous step.
 * - While the host runs, nothing goes out: Pi's follow-up queue cannot be withdrawn, so a wake handed
 *   over during a run could be read by a later call of the same run and still arrive.
 * - When the run settles, what waits goes out at once, as one batch; when the host is idle, after the
 *   debounce window, with whatever else came meanwhile.
 * - A kind unschedules a job whose wake is no longer due; one still queued but no longer eligible at
 *   the flush is dropped there.
 */

/** The time and timers the decision point and the pattern wakes' cooldown use (tests step their own). */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** One kind of wake: what the decision point asks of it. */
export interface WakeKind<T> {
  /** Still due: armed, unobserved, the job not stopped, the line not shown (re-checked at every flush). */
  eligible(jobId: number): boolean;
  /** The wake as the prompt names it, counted as sent by the kind; undefined: nothing to say after all. */
  take(jobId: number): T | undefined;
}

export type WakeKinds<Records> = { [K in keyof Records]: WakeKind<Records[K]> };
export type TakenWakes<Records> = { [K in keyof Records]: Records[K][] };

export class DecisionPoint<Records extends Record<string, unknown>> {
  private readonly queued = new Map<keyof Records, number[]>();
  /** A run was reported started and has not settled. */
  private running = false;
  private timer: unknown;

  constructor(
    private readonly kinds: WakeKinds<Records>,
    private readonly clock: Clock,
    private readonly debounceMs: number,
    /** Delivers what was taken (never called with nothing). */
    private readonly send: (taken: TakenWakes<Records>) => void,
  ) {
    for (const kind of Object.keys(kinds)) this.queued.set(kind, []);
  }

  /** Queues the job's wake of `kind` for the next flush (once). */
  schedule(kind: keyof Records, jobId: number): void {
    const queue = this.queued.get(kind)!;
    if (queue.includes(jobId)) return;
    queue.push(jobId);
    this.startDebounce();
  }

  unschedule(kind: keyof Records, jobId: number): void {
    const queue = this.queued.get(kind)!;
    const index = queue.indexOf(jobId);
    if (index !== -1) queue.splice(index, 1);
  }

  /** A run of the host started: wakes wait for it to settle. */
  runStarted(): void {
    this.running = true;
  }

  /** The run settled (the host is idle): what waits is decided now. */
  runSettled(): void {
    this.running = false;
    if (this.count > 0) this.flush();
  }

  get held(): boolean {
    return this.running;
  }

  /** Wakes queued and not yet decided. */
  get count(): number {
    let count = 0;
    for (const queue of this.queued.values()) count += queue.length;
    return count;
  }

  /** Forgets everything queued (shutdown). */
  clear(): void {
    for (const queue of this.queued.values()) queue.length = 0;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private startDebounce(): void {
    if (this.timer === undefined && !this.running) this.timer = this.clock.setTimeout(() => this.flush(), this.debounceMs);
  }

  /** The decision point: re-check every queued wake and send those still due, as one batch. */
  private flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) return;
    const taken = {} as TakenWakes<Records>;
    let any = false;
    for (const [kind, queue] of this.queued) {
      const wakes: unknown[] = [];
      for (const jobId of queue.splice(0)) {
        if (!this.kinds[kind].eligible(jobId)) continue;
        const wake = this.kinds[kind].take(jobId);
        if (wake !== undefined) wakes.push(wake);
      }
      taken[kind] = wakes as Records[typeof kind][];
      any ||= wakes.length > 0;
    }
    if (any) this.send(taken);
  }
}
