import { WAKE_DEBOUNCE_MS, WAKE_MAX_LISTED } from "../shared/constants.ts";
import { DecisionPoint, type TakenWakes } from "./decision-point.ts";
import { type DeafWakeJob, type InputWakeJob, InputWakes } from "./input-wakes.ts";
import { type PatternWakeJob, PatternWakes, patternWakeCooldownMs } from "./pattern-wakes.ts";
import { UnsentBatches } from "./unsent-batches.ts";
import {
  type Clock,
  NO_DRAINS,
  realClock,
  type SetOnExitStatus,
  type WakeBatch,
  type WakeHost,
  type WakeJob,
  type WakeSender,
} from "./wake-types.ts";

export type { DeafWakeJob, InputWakeJob } from "./input-wakes.ts";
export type { PatternWakeJob } from "./pattern-wakes.ts";
export type { Clock, SetOnExitStatus, WakeBatch, WakeHost, WakeJob, WakeSender } from "./wake-types.ts";

/**
 * Completion wake-ups, delivered exactly once. The invariant: a job's exit reaches the model through
 * a finalized tool result *or* one synthetic prompt, never both and never neither (while Pi runs).
 *
 * - A call that can return a job's exit takes an observation lease on it. While any lease is held,
 *   the wake waits. A call whose result carries the exit marks it observed; when Pi finalizes that call
 *   the wake is consumed. A call that returns without the exit, is cancelled, or fails releases its
 *   lease and the wake stays eligible.
 * - An eligible exit is queued at the one decision point (decision-point.ts): held while the host
 *   runs, re-checked and sent when the run settles; when the host is idle, exits within the debounce
 *   window go out as one batch.
 * - Stopping a job on purpose (kill, shutdown) suppresses its wake before any signal; a failed kill
 *   restores it.
 * - A job's `wake_on_pattern` matches are a second kind of wake (pattern-wakes.ts decides when one is
 *   due: cooldown, budget); they join the same batches, so a match and an exit close together are one
 *   prompt, and a call on the job drops the matches it will read itself. A pattern wake never
 *   consumes the exit's. A match while the job's exit drains waits for the exit (one prompt).
 *
 * Knows nothing of Pi: the sender and the clock are injected.
 */

/** How many delivered wakes are remembered for `set_on_exit`'s `too_late`. */
const DELIVERED_MEMORY = 256;

/** What an exit record knows of a job with a wake armed (or recently delivered). */
interface WakeRecord {
  jobId: number;
  /** The exit, once the job has exited. */
  exit?: WakeJob;
  /** Held back on purpose (a kill in progress). */
  suppressed: boolean;
  /** Handed to the sender; it can no longer be recalled. */
  sent: boolean;
}

/** The kinds of wake, in the order a batch lists them (an input wake is one more entry here, a deaf server another). */
interface WakeRecords extends Record<string, unknown> {
  exit: WakeJob;
  pattern: PatternWakeJob;
  input: InputWakeJob;
  deaf: DeafWakeJob;
}

export class CompletionCoordinator {
  private readonly records = new Map<number, WakeRecord>();
  /** Leases: call id → the jobs it watches, and which of them it has observed exiting. */
  private readonly leases = new Map<string, { jobs: Set<number>; observed: Set<number> }>();
  private readonly patterns: PatternWakes;
  private readonly inputs = new InputWakes();
  private readonly deaf = new InputWakes<DeafWakeJob>();
  /** Where every wake is decided (see decision-point.ts). */
  private readonly point: DecisionPoint<WakeRecords>;
  /** Batches whose send threw; retried by `retry`. */
  private readonly unsent = new UnsentBatches();
  /** Jobs whose wake went out recently, so a late `set_on_exit` can say `too_late` (bounded). */
  private readonly delivered = new Set<number>();

  constructor(
    private sender: WakeSender | undefined,
    clock: Clock = realClock,
    debounceMs: number = WAKE_DEBOUNCE_MS,
    patternCooldownMs: number = patternWakeCooldownMs(),
    private readonly host: WakeHost = NO_DRAINS,
  ) {
    this.patterns = new PatternWakes(clock, patternCooldownMs, (jobId) => this.schedulePattern(jobId));
    const kinds = {
      exit: { eligible: (jobId: number) => this.eligible(jobId), take: (jobId: number) => this.takeExit(jobId) },
      pattern: { eligible: (jobId: number) => this.patternEligible(jobId), take: (jobId: number) => this.patterns.take(jobId) },
      input: { eligible: (jobId: number) => this.inputEligible(jobId), take: (jobId: number) => this.inputs.take(jobId) },
      deaf: { eligible: (jobId: number) => this.deafEligible(jobId), take: (jobId: number) => this.deaf.take(jobId) },
    };
    this.point = new DecisionPoint<WakeRecords>(kinds, clock, debounceMs, (taken) => this.sendTaken(taken));
  }

  /** Rebinds delivery (a new Pi API after reload), or unbinds it (`undefined`: batches wait). */
  setSender(sender: WakeSender | undefined): void {
    this.sender = sender;
  }

  /** The host started a run: every wake waits for it to settle (see decision-point.ts). */
  runStarted(): void {
    this.point.runStarted();
  }

  /** The host's run settled: what waits is re-checked and what is still due goes out now, as one batch. */
  runSettled(): void {
    this.point.runSettled();
    this.retry();
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
    this.point.unschedule("pattern", jobId);
    this.patterns.arm(jobId, pattern, command);
  }

  /** Disarms the job's pattern; false when none was armed. */
  disarmPattern(jobId: number): boolean {
    this.point.unschedule("pattern", jobId);
    return this.patterns.disarm(jobId);
  }

  patternOf(jobId: number): string | undefined {
    return this.patterns.patternOf(jobId);
  }

  /** Where the job's output was last announced up to: a line ending there or before never wakes again. */
  patternAnnouncedThrough(jobId: number): number {
    return this.patterns.announcedThrough(jobId);
  }

  /**
   * The job printed `count` lines its pattern matches, `line` the first, in output that ends at byte
   * `end` of its stream (while no call was attached).
   */
  patternHit(jobId: number, line: string, count: number, end?: number): void {
    this.patterns.hit(jobId, line, count, end);
  }

  /** The job has waited for input long enough (its wake armed, no call on it): one wake, at the next decision. */
  inputWaits(wake: InputWakeJob): void {
    this.inputs.add(wake);
    if (this.inputEligible(wake.jobId)) this.point.schedule("input", wake.jobId);
    else this.inputs.drop(wake.jobId);
  }

  /**
   * A server of the job went deaf (SPEC §3c): one notice at the next decision, at the job's level.
   * Level: today the exit wake's arming (`wake` if only a pattern is armed), as for input wakes;
   * attention levels plug in at {@link deafEligible} and the batch it joins.
   */
  deafServer(wake: DeafWakeJob): void {
    this.deaf.add(wake);
    if (this.deafEligible(wake.jobId)) this.point.schedule("deaf", wake.jobId);
    else this.deaf.drop(wake.jobId);
  }

  /**
   * The model called on the job (a poll, a write, a kill): the lines it reads are not announced, the
   * pattern's budget starts over, and a prompt it has now seen needs no input wake.
   */
  jobCalled(jobId: number): void {
    this.dropInput(jobId);
    this.point.unschedule("pattern", jobId);
    this.patterns.called(jobId);
    this.unsent.withdraw(jobId, "patterns");
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
    this.point.unschedule("exit", jobId);
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
      this.unsent.withdraw(jobId, "jobs");
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
    const record = this.records.get(job.jobId);
    if (record && !record.sent) {
      record.exit = job;
      this.scheduleIfEligible(job.jobId);
    }
    // A match held for the exit (its drain, its cooldown) joins the exit's batch: one prompt says both.
    this.patterns.exited(job.jobId);
    this.dropInput(job.jobId);
  }

  /**
   * Holds a job's wake back before it is stopped on purpose. Returns `restore`, for a stop that
   * failed: the wake becomes eligible again.
   */
  suppress(jobId: number): () => void {
    this.dropInput(jobId);
    this.point.unschedule("pattern", jobId);
    const restorePattern = this.patterns.hold(jobId);
    const record = this.records.get(jobId);
    if (!record || record.sent) return restorePattern;
    record.suppressed = true;
    this.point.unschedule("exit", jobId);
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
    this.unsent.withdraw(jobId, "jobs");
    this.unsent.withdraw(jobId, "patterns");
    this.point.unschedule("pattern", jobId);
    this.patterns.forget(jobId);
    this.dropInput(jobId);
  }

  /** Shutdown: every pending wake is dropped, nothing more is sent. */
  dropAll(): void {
    this.records.clear();
    this.delivered.clear();
    this.leases.clear();
    this.point.clear();
    this.patterns.clear();
    this.inputs.clear();
    this.deaf.clear();
    this.unsent.takeAll();
  }

  /** Sends again what failed to send synchronously (a stale or not-yet-bound API). */
  retry(): void {
    if (this.point.held) return;
    const batches = this.unsent.takeAll();
    for (const batch of batches) this.deliver(batch);
  }

  /** Wakes scheduled and not yet sent (held for a run included), plus batches waiting for a retry. */
  get waiting(): number {
    return this.point.count + this.unsent.count;
  }

  private eligible(jobId: number): boolean {
    const record = this.records.get(jobId);
    if (!record?.exit || record.sent || record.suppressed) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return true;
  }

  private scheduleIfEligible(jobId: number): void {
    if (this.eligible(jobId)) this.point.schedule("exit", jobId);
  }

  /**
   * A pattern wake may go out unless a call on the job holds a lease (it reads those lines), or the
   * job's leader exited and its drain goes on: the exit is near, and the match goes with it.
   */
  private patternEligible(jobId: number): boolean {
    if (!this.patterns.pending(jobId) || this.host.draining(jobId)) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return true;
  }

  /**
   * An input wake may go out while the job has a wake armed (exit or pattern), no call holds it, and
   * it still waits at that prompt (asked last: a held wake whose prompt timed out meanwhile is dropped).
   */
  private inputEligible(jobId: number): boolean {
    if (!this.inputs.has(jobId) || !(this.isArmed(jobId) || this.patterns.patternOf(jobId) !== undefined)) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return this.host.waitsForInput(jobId);
  }

  /** A deaf-server notice may go out while the job has a wake armed and no call holds it (a call's result says it). */
  private deafEligible(jobId: number): boolean {
    if (!this.deaf.has(jobId) || !(this.isArmed(jobId) || this.patterns.patternOf(jobId) !== undefined)) return false;
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return false;
    return true;
  }

  private dropInput(jobId: number): void {
    this.inputs.drop(jobId);
    this.point.unschedule("input", jobId);
    this.unsent.withdraw(jobId, "inputs");
    this.deaf.drop(jobId);
    this.point.unschedule("deaf", jobId);
    this.unsent.withdraw(jobId, "deaf");
  }

  private schedulePattern(jobId: number): void {
    if (this.patternEligible(jobId)) this.point.schedule("pattern", jobId);
  }

  private forget(jobId: number): void {
    this.records.delete(jobId);
    this.point.unschedule("exit", jobId);
  }

  /** The exit wake that goes out now: marked sent, remembered for `too_late`, forgotten as a record. */
  private takeExit(jobId: number): WakeJob | undefined {
    const record = this.records.get(jobId);
    if (!record?.exit) return undefined;
    this.records.delete(jobId);
    this.delivered.add(jobId);
    for (const old of this.delivered) {
      if (this.delivered.size <= DELIVERED_MEMORY) break;
      this.delivered.delete(old);
    }
    return record.exit;
  }

  private sendTaken(taken: TakenWakes<WakeRecords>): void {
    const { exit: jobs, pattern: patterns, input: inputs, deaf } = taken;
    const more = [jobs, patterns, inputs, deaf].reduce((sum, list) => sum + Math.max(0, list.length - WAKE_MAX_LISTED), 0);
    this.deliver({
      jobs: jobs.slice(0, WAKE_MAX_LISTED),
      more,
      ...(patterns.length > 0 ? { patterns: patterns.slice(0, WAKE_MAX_LISTED) } : {}),
      ...(inputs.length > 0 ? { inputs: inputs.slice(0, WAKE_MAX_LISTED) } : {}),
      ...(deaf.length > 0 ? { deaf: deaf.slice(0, WAKE_MAX_LISTED) } : {}),
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
