import { WAKE_DEBOUNCE_MS, WAKE_MAX_LISTED } from "../shared/constants.ts";
import { type InputWakeJob, InputWakes } from "./input-wakes.ts";
import { PatternWakes, patternWakeCooldownMs } from "./pattern-wakes.ts";
import { type Clock, realClock, type WakeBatch, type WakeJob, type WakeSender } from "./wake-types.ts";

export type { InputWakeJob } from "./input-wakes.ts";
export type { PatternWakeJob } from "./pattern-wakes.ts";
export type { Clock, WakeBatch, WakeJob, WakeSender } from "./wake-types.ts";

/**
 * Completion wake-ups, delivered exactly once. The invariant: a job's exit reaches the model through
 * a finalized tool result *or* one synthetic prompt, never both and never neither (while Pi runs).
 *
 * - A call that can return a job's exit takes an observation lease on it. While any lease is held,
 *   the wake waits. A call whose result carries the exit marks it observed; when Pi finalizes that call
 *   the wake is consumed. A call that returns without the exit, is cancelled, or fails releases its
 *   lease and the wake stays eligible.
 * - An eligible exit is scheduled; exits within the debounce window go out as one batch.
 * - Stopping a job on purpose (kill, shutdown) suppresses its wake before any signal; a failed kill
 *   restores it.
 * - A job's `wake_on_pattern` matches are a second kind of wake (pattern-wakes.ts decides when one is
 *   due: cooldown, budget); they join the same batches, so a match and an exit close together are one
 *   prompt, and a call on the job drops the matches it will read itself. A pattern wake never
 *   consumes the exit's.
 *
 * Knows nothing of Pi: the sender and the clock are injected.
 */

/** How many delivered wakes are remembered for `set_on_exit`'s `too_late`. */
const DELIVERED_MEMORY = 256;

export type SetOnExitStatus = "disarmed" | "already_none" | "armed" | "already_armed" | "too_late";

/** What the coordinator knows of a job with a wake armed (or recently delivered). */
interface WakeRecord {
  jobId: number;
  /** The exit, once the job has exited. */
  exit?: WakeJob;
  /** Held back on purpose (a kill in progress). */
  suppressed: boolean;
  /** Handed to the sender; it can no longer be recalled. */
  sent: boolean;
}

export class CompletionCoordinator {
  private readonly records = new Map<number, WakeRecord>();
  /** Leases: call id → the jobs it watches, and which of them it has observed exiting. */
  private readonly leases = new Map<string, { jobs: Set<number>; observed: Set<number> }>();
  /** Exits waiting for the debounce to end, in order. */
  private readonly pending: number[] = [];
  /** Pattern wakes waiting for the debounce to end, in order. */
  private pendingPatterns: number[] = [];
  private readonly patterns: PatternWakes;
  private readonly inputs = new InputWakes(
    (jobId) => this.inputEligible(jobId),
    () => this.startDebounce(),
  );
  /** Batches whose send threw; retried by `retry`. */
  private unsent: WakeBatch[] = [];
  /** Jobs whose wake went out recently, so a late `set_on_exit` can say `too_late` (bounded). */
  private readonly delivered = new Set<number>();
  private timer: unknown;

  constructor(
    private sender: WakeSender | undefined,
    private readonly clock: Clock = realClock,
    private readonly debounceMs: number = WAKE_DEBOUNCE_MS,
    patternCooldownMs: number = patternWakeCooldownMs(),
  ) {
    this.patterns = new PatternWakes(clock, patternCooldownMs, (jobId) => this.schedulePattern(jobId));
  }

  /** Rebinds delivery (a new Pi API after reload), or unbinds it (`undefined`: batches wait). */
  setSender(sender: WakeSender | undefined): void {
    this.sender = sender;
  }

  /** Arms the wake of a running job. */
  arm(jobId: number): void {
    if (!this.records.has(jobId)) this.records.set(jobId, { jobId, suppressed: false, sent: false });
  }

  isArmed(jobId: number): boolean {
    const record = this.records.get(jobId);
    return record !== undefined && !record.sent;
  }

  /** Knows the job: armed, an exited job whose wake is still on its way (a tombstone), or one just woken. */
  knows(jobId: number): boolean {
    return this.records.has(jobId) || this.delivered.has(jobId) || this.patterns.patternOf(jobId) !== undefined;
  }

  /** Arms or replaces the job's `wake_on_pattern` (a call of the model: its budget starts over). */
  armPattern(jobId: number, pattern: string, command: string): void {
    this.unschedulePattern(jobId);
    this.patterns.arm(jobId, pattern, command);
  }

  /** Disarms the job's pattern; false when none was armed. */
  disarmPattern(jobId: number): boolean {
    this.unschedulePattern(jobId);
    return this.patterns.disarm(jobId);
  }

  patternOf(jobId: number): string | undefined {
    return this.patterns.patternOf(jobId);
  }

  /** The job printed `count` lines its pattern matches, `line` the first (while no call was attached). */
  patternHit(jobId: number, line: string, count: number): void {
    this.patterns.hit(jobId, line, count);
  }

  /** The job has waited for input long enough (its wake armed, no call on it): one wake, in the next batch. */
  inputWaits(wake: InputWakeJob): void {
    this.inputs.add(wake);
  }

  /**
   * The model called on the job (a poll, a write, a kill): the lines it reads are not announced, and
   * the pattern's budget starts over.
   */
  jobCalled(jobId: number): void {
    this.inputs.drop(jobId);
    this.unschedulePattern(jobId);
    this.patterns.called(jobId);
    this.withdrawUnsent(jobId, "patterns");
  }

  /**
   * Changes the wake policy without touching the process. `jobExited`: the job has exited (so a new
   * wake is too late); undefined when the runtime does not know the job at all.
   */
  setOnExit(jobId: number, policy: "none" | "wake", jobExited: boolean): SetOnExitStatus {
    const record = this.records.get(jobId);
    if (this.delivered.has(jobId)) return "too_late";
    if (policy === "none") {
      if (!record) return "already_none";
      if (record.sent) return "too_late";
      this.forget(jobId);
      return "disarmed";
    }
    if (record) return record.sent ? "too_late" : "already_armed";
    if (jobExited) return "too_late";
    this.arm(jobId);
    return "armed";
  }

  /** A call starts watching a job: the job's wake waits until the call says what it saw. */
  lease(callId: string, jobId: number): void {
    const lease = this.leases.get(callId) ?? { jobs: new Set<number>(), observed: new Set<number>() };
    lease.jobs.add(jobId);
    this.leases.set(callId, lease);
    this.unschedule(jobId);
  }

  /** The call's result carries the job's exit: it is consumed when Pi finalizes the call. */
  observed(callId: string, jobId: number): void {
    this.lease(callId, jobId);
    this.leases.get(callId)!.observed.add(jobId);
  }

  /** The call returned without the exit, was cancelled, or failed: its leases end, wakes stay eligible. */
  release(callId: string): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    this.leases.delete(callId);
    for (const jobId of lease.jobs) this.scheduleIfEligible(jobId);
    // Matches that came while the call held the job are lines it returned: never also a wake.
    for (const jobId of lease.jobs) this.jobCalled(jobId);
  }

  /**
   * Pi finalized the call (`tool_execution_end`). A successful call consumes the wakes of the exits it
   * observed; a call that ended as an error releases them instead.
   */
  finalize(callId: string, isError: boolean): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    if (isError) {
      this.release(callId);
      return;
    }
    this.leases.delete(callId);
    for (const jobId of lease.observed) {
      this.forget(jobId);
      this.withdrawUnsent(jobId, "jobs");
    }
    for (const jobId of lease.jobs) if (!lease.observed.has(jobId)) this.scheduleIfEligible(jobId);
    for (const jobId of lease.jobs) this.jobCalled(jobId);
  }

  /** A nested call's observations become its enclosing call's, and commit when that one is finalized. */
  transfer(callId: string, toCallId: string): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    this.leases.delete(callId);
    const target = this.leases.get(toCallId) ?? { jobs: new Set<number>(), observed: new Set<number>() };
    for (const jobId of lease.jobs) target.jobs.add(jobId);
    for (const jobId of lease.observed) target.observed.add(jobId);
    this.leases.set(toCallId, target);
  }

  /** The job exited: its wake goes out once nobody watching it remains. */
  jobExited(job: WakeJob): void {
    // A match waiting out its cooldown joins the exit's batch: one prompt says both.
    this.patterns.exited(job.jobId);
    this.inputs.drop(job.jobId);
    const record = this.records.get(job.jobId);
    if (!record || record.sent) return;
    record.exit = job;
    this.scheduleIfEligible(job.jobId);
  }

  /**
   * Holds a job's wake back before it is stopped on purpose. Returns `restore`, for a stop that
   * failed: the wake becomes eligible again.
   */
  suppress(jobId: number): () => void {
    this.inputs.drop(jobId);
    this.unschedulePattern(jobId);
    const restorePattern = this.patterns.hold(jobId);
    const record = this.records.get(jobId);
    if (!record || record.sent) return restorePattern;
    record.suppressed = true;
    this.unschedule(jobId);
    return () => {
      restorePattern();
      if (this.records.get(jobId) !== record) return;
      record.suppressed = false;
      this.scheduleIfEligible(jobId);
    };
  }

  /** The job was stopped on purpose: its wake is gone for good. */
  dropWake(jobId: number): void {
    this.forget(jobId);
    this.withdrawUnsent(jobId, "jobs");
    this.withdrawUnsent(jobId, "patterns");
    this.unschedulePattern(jobId);
    this.patterns.forget(jobId);
    this.inputs.drop(jobId);
  }

  /** Shutdown: every pending wake is dropped, nothing more is sent. */
  dropAll(): void {
    this.records.clear();
    this.delivered.clear();
    this.leases.clear();
    this.pending.length = 0;
    this.pendingPatterns = [];
    this.patterns.clear();
    this.inputs.clear();
    this.unsent = [];
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sends again what failed to send synchronously (a stale or not-yet-bound API). */
  retry(): void {
    const batches = this.unsent;
    this.unsent = [];
    for (const batch of batches) this.deliver(batch);
  }

  /** Wakes scheduled and not yet sent, plus batches waiting for a retry. */
  get waiting(): number {
    const unsent = this.unsent.reduce(
      (sum, batch) => sum + batch.jobs.length + (batch.patterns?.length ?? 0) + (batch.inputs?.length ?? 0) + batch.more,
      0,
    );
    return this.pending.length + this.pendingPatterns.length + this.inputs.waiting + unsent;
  }

  private eligible(jobId: number): boolean {
    const record = this.records.get(jobId);
    if (!record?.exit || record.sent || record.suppressed) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return true;
  }

  private scheduleIfEligible(jobId: number): void {
    if (!this.eligible(jobId) || this.pending.includes(jobId)) return;
    this.pending.push(jobId);
    this.startDebounce();
  }

  private startDebounce(): void {
    if (this.timer === undefined) this.timer = this.clock.setTimeout(() => this.flush(), this.debounceMs);
  }

  /** A pattern wake may go out unless a call on the job holds a lease (it reads those lines). */
  private patternEligible(jobId: number): boolean {
    if (!this.patterns.pending(jobId)) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return true;
  }

  /** An input wake may go out while the job has a wake armed (exit or pattern) and no call holds it. */
  private inputEligible(jobId: number): boolean {
    const record = this.records.get(jobId);
    const armed = (record !== undefined && !record.sent && !record.suppressed) || this.patterns.patternOf(jobId) !== undefined;
    return armed && ![...this.leases.values()].some((lease) => lease.jobs.has(jobId));
  }

  private schedulePattern(jobId: number): void {
    if (!this.patternEligible(jobId) || this.pendingPatterns.includes(jobId)) return;
    this.pendingPatterns.push(jobId);
    this.startDebounce();
  }

  private unschedulePattern(jobId: number): void {
    this.pendingPatterns = this.pendingPatterns.filter((id) => id !== jobId);
  }

  private unschedule(jobId: number): void {
    const index = this.pending.indexOf(jobId);
    if (index !== -1) this.pending.splice(index, 1);
  }

  private forget(jobId: number): void {
    this.records.delete(jobId);
    this.unschedule(jobId);
  }

  private flush(): void {
    this.timer = undefined;
    const ready = this.pending.splice(0).filter((jobId) => this.eligible(jobId));
    const matches = this.pendingPatterns.splice(0).filter((jobId) => this.patternEligible(jobId));
    const patterns = matches.map((jobId) => this.patterns.take(jobId)).filter((wake) => wake !== undefined);
    const inputs = this.inputs.take();
    if (ready.length === 0 && patterns.length === 0 && inputs.length === 0) return;
    const jobs = ready.map((jobId) => this.records.get(jobId)!.exit!);
    for (const jobId of ready) this.records.get(jobId)!.sent = true;
    const more = [jobs, patterns, inputs].reduce((sum, list) => sum + Math.max(0, list.length - WAKE_MAX_LISTED), 0);
    this.deliver({
      jobs: jobs.slice(0, WAKE_MAX_LISTED),
      more,
      ...(patterns.length > 0 ? { patterns: patterns.slice(0, WAKE_MAX_LISTED) } : {}),
      ...(inputs.length > 0 ? { inputs: inputs.slice(0, WAKE_MAX_LISTED) } : {}),
    });
    // A delivered wake is done; the job stays readable in the registry, and reading it wakes nothing.
    for (const jobId of ready) {
      this.records.delete(jobId);
      this.delivered.add(jobId);
    }
    for (const old of this.delivered) {
      if (this.delivered.size <= DELIVERED_MEMORY) break;
      this.delivered.delete(old);
    }
  }

  /**
   * A batch whose send failed waits for `retry`; what the model has learned since by a call (the
   * exit in a result, the lines in a read), or what a stop dropped, leaves it before it goes out.
   */
  private withdrawUnsent(jobId: number, kind: "jobs" | "patterns"): void {
    if (this.unsent.length === 0) return;
    this.unsent = this.unsent.filter((batch) => {
      if (kind === "jobs") batch.jobs = batch.jobs.filter((job) => job.jobId !== jobId);
      else if (batch.inputs) {
        batch.inputs = batch.inputs.filter((wake) => wake.jobId !== jobId);
        if (batch.inputs.length === 0) delete batch.inputs;
      }
      if (kind === "patterns" && batch.patterns) {
        const patterns = batch.patterns.filter((wake) => wake.jobId !== jobId);
        if (patterns.length > 0) batch.patterns = patterns;
        else delete batch.patterns;
      }
      return batch.jobs.length > 0 || (batch.patterns?.length ?? 0) > 0 || (batch.inputs?.length ?? 0) > 0 || batch.more > 0;
    });
  }

  private deliver(batch: WakeBatch): void {
    try {
      if (!this.sender) throw new Error("no sender bound");
      this.sender(batch);
    } catch {
      // Only a synchronous failure is observable here; the batch waits for `retry`.
      this.unsent.push(batch);
    }
  }
}
