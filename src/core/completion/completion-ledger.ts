/*
 * completion/ — exactly-once delivery of what a job tells the model while nobody watches it: its
 * exit, a line matching its `wake_on_pattern`, a wait for input, a server gone deaf. The flow at a glance:
 * 1. The model arms a job's wakes at a level (`arm`, `armPattern`; job-wakes.ts arms the job's side).
 * 2. A call attached to a job leases it (`lease`); a result that carries the exit observes it, and
 *    Pi finalizing the call (`callEnded`) commits it (a nested call's, at its outermost call's end).
 * 3. An exit, a match, a wait for input or a deaf server on a job no call leases is queued at the one decision
 *    point, held while Pi runs.
 * 4. When the run settles (or 250 ms after the first, Pi idle) each is re-checked and, if one is a
 *    `wake` (attention.ts: levels, the turn budget), all that is due goes out as one batch;
 *    `next_turn` notices ride with the next run that starts (`takeForTurn`).
 * Files: this one (the invariant, its one public face), decision-point.ts, attention.ts,
 * pattern-wakes.ts (cooldown, budget), wake-delivery.ts (batches, sends, retries), job-wakes.ts.
 *
 * May import: shared, input-wait, request, job.
 */

import type { Lease, ObservedExit } from "../job/attached-call.ts";
import type { WakeJob } from "../job/job-snapshot.ts";
import { writtenWakePattern } from "../request/request.ts";
import { type Clock, realClock } from "../shared/clock.ts";
import { type DecidedLevel, type NoticeLevel, TurnBudget, wakeTurnsFromEnv } from "./attention.ts";
import { DecisionPoint } from "./decision-point.ts";
import { PatternWakes, patternWakeCooldownMs } from "./pattern-wakes.ts";
import { type DeafWakeJob, type InputWakeJob, type WakeBatch, WakeDelivery, type WakeRecords, type WakeSender } from "./wake-delivery.ts";

/** Exits this close together are announced in one prompt rather than one prompt each. */
export const WAKE_DEBOUNCE_MS = 250;
/** Nested exits kept for one enclosing call's receipt, and how many of them it names. */
const RECEIPT_MAX_KEPT = 64;
const RECEIPT_MAX_SHOWN = 16;
/** How many delivered exit wakes are remembered for `set_on_exit`'s `too_late`. */
const DELIVERED_MEMORY = 256;

/** The exits calls nested inside one outermost call reported: the last few, and how many in all. */
export interface Receipt {
  exits: ObservedExit[];
  total: number;
}

export type SetOnExitStatus = "disarmed" | "already_none" | "armed" | "already_armed" | "too_late";

/** What the decision point asks of the jobs (the host's run is told instead: `runStarted`, `runSettled`). */
export interface WakeHost {
  /** The job's leader exited and its last output is still being drained: its exit is near. */
  draining(jobId: number): boolean;
  /** The job still waits at the prompt its input wake named: nothing printed since, still reading its stdin. */
  waitsForInput(jobId: number): boolean;
  /** A person typed into the job (or the runtime no longer holds it): no wake quotes its output. */
  typedInto(jobId: number): boolean;
  /** A server told deaf listens again at the latest look (no new scan): its notice is no news. */
  listensAgain(jobId: number): boolean;
}

const ANY_JOB: WakeHost = { draining: () => false, waitsForInput: () => true, typedInto: () => false, listensAgain: () => false };

/** How a ledger is made: a clock, windows and a turn budget of its own for tests. */
export interface LedgerOptions {
  clock?: Clock;
  debounceMs?: number;
  patternCooldownMs?: number;
  /** Turns notices may start per ten minutes (0: no limit); default `PI_UNIFIED_EXEC_WAKE_TURNS`. */
  wakeTurns?: number;
}

/**
 * Exactly-once completion, owned here and nowhere else. Invariant: while Pi runs, the end of a job
 * whose wake is armed reaches the model through a finalized tool result **or** one wake prompt —
 * never both, never neither. The rules that keep it:
 * 1. `exec_command` arms a wake only when it hands back a live id; `set_on_exit` arms or disarms
 *    later, also for an exited job whose wake has not gone out (a tombstone).
 * 2. While any lease on a job is held its wake waits. A result that carries the exit observes it, and
 *    the wake is consumed when Pi finalizes that call without an error; a result without the exit, a
 *    cancel, a throw or an error result releases the lease and the wake stays eligible. A listing or
 *    a kill that reports an exit observes it the same way.
 * 3. A stop on purpose (a kill by the model or the user, shutdown) holds the job's wakes back before
 *    any signal; a kill that fails gives them back, one that worked drops them.
 * 4. Nesting: a call inside another tool's call hands what it observed to the outermost call; a
 *    nested read of an exit an earlier nested read reported replays that result until then.
 * 5. One decision point: every kind is re-checked there (still armed, unobserved, not stopped, the
 *    line not read, the prompt still waiting) and sent only from there, never while Pi runs.
 * 6. Pattern and input wakes never touch the exit's; a call on the job drops what it will read
 *    itself. A match during the exit's drain waits for the exit and goes with it.
 * 7. Every level keeps these rules: a `next_turn` notice is re-checked when the run it rides with
 *    starts, and one made moot meanwhile is dropped exactly as a wake is.
 * Knows nothing of Pi: call ids are plain strings, the sender is bound from outside.
 */
export class CompletionLedger<Report> {
  /** Armed exit wakes, by job: their level, the exit once the job has ended, `suppressed` while a stop is under way. */
  private readonly exits = new Map<number, { level: NoticeLevel; exit?: WakeJob; suppressed: boolean }>();
  /** Jobs whose exit wake went out recently, so a late `set_on_exit` can say `too_late` (bounded). */
  private readonly delivered = new Set<number>();
  private readonly patterns: PatternWakes;
  /** Input wakes due, one per job, until the decision point takes them. */
  private readonly inputs = new Map<number, InputWakeJob>();
  /** Deaf-server notices due, one per job, until the decision point takes them. */
  /** Deaf-server notices by job, with when the ledger got each (its `closedMs` grows until it goes out). */
  private readonly deaf = new Map<number, { wake: DeafWakeJob; at: number }>();
  private readonly now: () => number;
  private readonly point: DecisionPoint<WakeRecords>;
  /** Leases: call id → the jobs it holds, and those whose exit its result carries. */
  private readonly leases = new Map<string, { jobs: Set<number>; observed: Set<number> }>();
  /** Call → the call it runs inside (nested calls only). */
  private readonly parents = new Map<string, string>();
  /** Exits each nested call reported, until it ends and hands them to its outermost call. */
  private readonly observations = new Map<string, ObservedExit[]>();
  /** Per outermost call: the exits its nested calls reported, named once each. */
  private readonly receipts = new Map<string, { kept: ObservedExit[]; total: number; jobs: Set<number> }>();
  /** Results saved for repeated nested reads, by job id, until their outermost call is finalized. */
  private readonly replays = new Map<number, { scope: string; report: Report }>();
  private readonly delivery: WakeDelivery;
  /** Turns notices may still start: past it, pattern, input and deaf-server notices wait for the next turn. */
  private readonly budget: TurnBudget;

  constructor(
    private readonly host: WakeHost = ANY_JOB,
    {
      clock = realClock,
      debounceMs = WAKE_DEBOUNCE_MS,
      patternCooldownMs = patternWakeCooldownMs(),
      wakeTurns = wakeTurnsFromEnv(),
    }: LedgerOptions = {},
  ) {
    this.delivery = new WakeDelivery((jobId) => host.typedInto(jobId));
    this.now = () => clock.now();
    this.budget = new TurnBudget(this.now, wakeTurns);
    this.patterns = new PatternWakes(clock, patternCooldownMs, (jobId) => this.schedulePattern(jobId));
    // An exit keeps the level the model set; the budget may hold back the others.
    const kinds = {
      jobs: {
        eligible: (jobId: number) => this.exitEligible(jobId),
        level: (jobId: number) => this.exits.get(jobId)?.level ?? "wake",
        take: (jobId: number) => this.takeExit(jobId),
      },
      patterns: {
        eligible: (jobId: number) => this.patternEligible(jobId),
        level: (jobId: number) => this.budget.decide(this.patterns.levelOf(jobId)),
        take: (jobId: number) => this.patterns.take(jobId),
      },
      inputs: {
        eligible: (jobId: number) => this.inputEligible(jobId),
        level: (jobId: number) => this.followingLevel(jobId),
        take: (jobId: number) => this.takeInput(jobId),
      },
      deaf: {
        eligible: (jobId: number) => this.deafEligible(jobId),
        level: (jobId: number) => this.followingLevel(jobId),
        take: (jobId: number) => this.takeDeaf(jobId),
      },
    };
    this.point = new DecisionPoint<WakeRecords>(kinds, clock, debounceMs, (taken) => {
      this.budget.spend();
      this.delivery.send(taken);
    });
  }

  // ---- the Pi layer's side ------------------------------------------------------------------------

  /** Binds delivery (a new Pi API after reload), or unbinds it (`undefined`: batches wait). */
  bindSender(sender: WakeSender | undefined): void {
    this.delivery.bind(sender);
    if (sender) this.retry();
  }

  /** Pi started a run (`before_agent_start`, `agent_start`): wakes are held until it settles. */
  runStarted(): void {
    this.point.runStarted();
  }

  /**
   * A run is starting (`before_agent_start`): the notices still due ride with it, whatever their
   * level, as one batch for Pi to add to the run's first message; then the run holds what comes.
   */
  takeForTurn(): WakeBatch | undefined {
    const taken = this.point.takeForTurn();
    this.point.runStarted();
    return taken && this.delivery.forTurn(taken);
  }

  /** Pi's run settled (`agent_settled`): held wakes are re-checked, what is still due goes out as one prompt, and sends that threw are retried. */
  runSettled(): void {
    this.point.runSettled();
    this.retry();
  }

  /** A tool call started (`tool_execution_start`); `parentId` when it runs inside another call. */
  callStarted(callId: string, parentId?: string): void {
    if (parentId) this.parents.set(callId, parentId);
  }

  /**
   * Pi finalized a call (`tool_execution_end`). A nested call hands what it observed to its outermost
   * call (or releases it, if it failed); an outermost call commits, or releases when it ended as an error.
   */
  callEnded(callId: string, isError: boolean): void {
    const seen = this.observations.get(callId) ?? [];
    this.observations.delete(callId);
    if (!this.parents.has(callId)) {
      this.finalize(callId, isError);
      for (const [jobId, replay] of this.replays) if (replay.scope === callId) this.replays.delete(jobId);
      this.receipts.delete(callId);
      return;
    }
    const root = this.rootOf(callId);
    this.parents.delete(callId);
    if (isError) {
      this.release(callId);
      return;
    }
    this.transfer(callId, root);
    const receipt = this.receipts.get(root) ?? { kept: [], total: 0, jobs: new Set<number>() };
    // A job's exit is named once, however often nested reads replayed it.
    for (const exit of seen) {
      if (receipt.jobs.has(exit.jobId)) continue;
      receipt.jobs.add(exit.jobId);
      receipt.kept.push(exit);
      receipt.total++;
    }
    receipt.kept.splice(0, Math.max(0, receipt.kept.length - RECEIPT_MAX_KEPT));
    if (receipt.total > 0) this.receipts.set(root, receipt);
  }

  /** The exits nested calls reported inside outermost call `callId`, for its result; undefined if none. */
  receipt(callId: string): Receipt | undefined {
    const receipt = this.receipts.get(callId);
    if (!receipt || this.parents.has(callId)) return undefined;
    return { exits: receipt.kept.slice(-RECEIPT_MAX_SHOWN), total: receipt.total };
  }

  /** Forgets every call (the session ended). */
  forgetCalls(): void {
    this.parents.clear();
    this.observations.clear();
    this.receipts.clear();
  }

  // ---- the runtime's side -------------------------------------------------------------------------

  /** Arms the exit wake of a running job at `level`. */
  arm(jobId: number, level: NoticeLevel = "wake"): void {
    if (!this.exits.has(jobId)) this.exits.set(jobId, { level, suppressed: false });
  }

  /** The level of the job's armed exit wake; undefined when none is armed. */
  exitLevel(jobId: number): NoticeLevel | undefined {
    return this.exits.get(jobId)?.level;
  }

  /** Knows the job: armed, ended with its wake on its way (a tombstone), just woken, or watched by a pattern. */
  knows(jobId: number): boolean {
    return this.exits.has(jobId) || this.delivered.has(jobId) || this.patterns.patternOf(jobId) !== undefined;
  }

  /** The job has a wake armed (its exit's or a pattern): only such a job may wake the model for a prompt. */
  wantsWakes(jobId: number): boolean {
    return this.exits.has(jobId) || this.patterns.patternOf(jobId) !== undefined;
  }

  /**
   * Changes the exit wake without touching the process: disarms it, arms it, or moves an armed one
   * (a tombstone's included) to another level. `jobExited`: a new wake would be too late.
   */
  setOnExit(jobId: number, policy: "none" | NoticeLevel, jobExited: boolean): SetOnExitStatus {
    if (this.delivered.has(jobId)) return "too_late";
    const record = this.exits.get(jobId);
    if (policy === "none") {
      if (!record) return "already_none";
      this.forgetExit(jobId);
      return "disarmed";
    }
    if (record?.level === policy) return "already_armed";
    if (record) {
      record.level = policy;
      this.point.unschedule("jobs", jobId);
      this.scheduleExit(jobId);
      return "armed";
    }
    if (jobExited) return "too_late";
    this.arm(jobId, policy);
    return "armed";
  }

  /** The job's exit is final: its wake goes out once no call holds it. A match held for the exit goes with it. */
  jobExited(job: WakeJob): void {
    const record = this.exits.get(job.jobId);
    if (record) {
      record.exit = job;
      this.scheduleExit(job.jobId);
    }
    this.patterns.exited(job.jobId);
    this.dropInput(job.jobId);
  }

  /** Arms or replaces the job's `wake_on_pattern` at `level` (a call of the model: its budget starts over). */
  armPattern(jobId: number, pattern: string, command: string, level: NoticeLevel = "wake"): void {
    this.point.unschedule("patterns", jobId);
    this.patterns.arm(jobId, pattern, command, level);
  }

  /** Disarms the job's pattern; false when none was armed. */
  disarmPattern(jobId: number): boolean {
    this.point.unschedule("patterns", jobId);
    return this.patterns.disarm(jobId);
  }

  /** The job's armed pattern as the model writes it (`next_turn:` first at that level), if any. */
  patternOf(jobId: number): string | undefined {
    const pattern = this.patterns.patternOf(jobId);
    return pattern === undefined ? undefined : writtenWakePattern(pattern, this.patterns.levelOf(jobId));
  }

  /** `count` lines matched the job's pattern while no call held it, `line` the first, in output ending at byte `end` of its stream. */
  patternHit(jobId: number, line: string, count: number, end?: number): void {
    this.patterns.hit(jobId, line, count, end);
  }

  /** Where the job's output was last announced up to by a pattern wake: those lines never wake again. */
  patternAnnouncedThrough(jobId: number): number {
    return this.patterns.announcedThrough(jobId);
  }

  /** The job has waited for input long enough while a wake is armed on it: one wake, at the next decision. */
  inputWaits(wake: InputWakeJob): void {
    this.inputs.set(wake.jobId, wake);
    if (this.inputEligible(wake.jobId)) this.point.schedule("inputs", wake.jobId);
    else this.inputs.delete(wake.jobId);
  }

  /** A server of the job went deaf: one notice at the next decision, while a wake is armed on the job. */
  deafServer(wake: DeafWakeJob): void {
    this.deaf.set(wake.jobId, { wake, at: this.now() });
    if (this.deafEligible(wake.jobId)) this.point.schedule("deaf", wake.jobId);
    else this.deaf.delete(wake.jobId);
  }

  /**
   * A call attaches to a job. It is a call of the model on the job: matches waiting to be announced are
   * its to read. Without a call id (a caller outside Pi) nothing is leased.
   */
  lease(callId: string | undefined, jobId: number): Lease<Report> {
    this.jobCalled(jobId);
    if (callId === undefined) return { settle: () => false };
    this.addLease(callId, jobId);
    return {
      settle: (report, exit) => {
        if (!report || !exit) {
          this.release(callId);
          return false;
        }
        const consumed = this.exits.has(jobId);
        this.observed(callId, exit);
        if (this.parents.has(callId)) this.replays.set(jobId, { scope: this.rootOf(callId), report });
        return consumed;
      },
    };
  }

  /** A result of call `callId` carries a job's exit (a poll, a listing, a kill): consumed when Pi finalizes the call. */
  observed(callId: string | undefined, exit: ObservedExit): void {
    if (callId === undefined) return;
    this.addLease(callId, exit.jobId);
    this.leases.get(callId)!.observed.add(exit.jobId);
    if (!this.parents.has(callId)) return;
    const list = this.observations.get(callId) ?? [];
    list.push(exit);
    this.observations.set(callId, list);
  }

  /** The result an earlier nested read inside the same outermost call reported for `jobId`, if any. */
  replay(callId: string | undefined, jobId: number): Report | undefined {
    const replay = this.replays.get(jobId);
    if (!replay || callId === undefined || !this.parents.has(callId)) return undefined;
    return this.rootOf(callId) === replay.scope ? replay.report : undefined;
  }

  /** Holds a job's wakes back before it is stopped on purpose; returns `restore`, for a stop that failed. */
  hold(jobId: number): () => void {
    this.dropInput(jobId);
    this.point.unschedule("patterns", jobId);
    const restorePattern = this.patterns.hold(jobId);
    const record = this.exits.get(jobId);
    if (!record) return restorePattern;
    record.suppressed = true;
    this.point.unschedule("jobs", jobId);
    return () => {
      restorePattern();
      if (this.exits.get(jobId) !== record) return;
      record.suppressed = false;
      this.scheduleExit(jobId);
    };
  }

  /** The job was stopped on purpose: its wakes are gone for good. */
  drop(jobId: number): void {
    this.forgetExit(jobId);
    this.delivery.withdraw(jobId, "jobs", "patterns");
    this.point.unschedule("patterns", jobId);
    this.patterns.forget(jobId);
    this.dropInput(jobId);
  }

  /** Shutdown: every pending wake is dropped, nothing more is sent. */
  dropAll(): void {
    this.exits.clear();
    this.delivered.clear();
    this.leases.clear();
    this.point.clear();
    this.patterns.clear();
    this.inputs.clear();
    this.deaf.clear();
    this.delivery.clear();
  }

  /** How many notices the turn budget holds for the next turn, and the budget (turns per ten minutes): the listing and the picker say so. */
  get heldByBudget(): { count: number; turns: number } {
    return { count: this.point.heldByBudget, turns: this.budget.turns };
  }

  /** Wakes queued and not yet sent (held for a run included), plus those in batches waiting for a retry. */
  get waiting(): number {
    return this.point.count + this.delivery.waiting;
  }

  // ---- leases ---------------------------------------------------------------------------------------

  /** Call `callId` holds job `jobId`: its exit wake waits until the call says what it saw. */
  private addLease(callId: string, jobId: number): void {
    const lease = this.leases.get(callId) ?? { jobs: new Set<number>(), observed: new Set<number>() };
    lease.jobs.add(jobId);
    this.leases.set(callId, lease);
    this.point.unschedule("jobs", jobId);
  }

  private leased(jobId: number): boolean {
    for (const lease of this.leases.values()) if (lease.jobs.has(jobId)) return true;
    return false;
  }

  /** The call returned without the exit, was cancelled, or failed: its leases end, wakes stay eligible. */
  private release(callId: string): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    this.leases.delete(callId);
    for (const jobId of lease.jobs) this.scheduleExit(jobId);
    // Matches that came while the call held the job are lines it returned: never also a wake.
    for (const jobId of lease.jobs) this.jobCalled(jobId);
  }

  /** An outermost call was finalized: a successful one consumes the exits it observed, an error releases them. */
  private finalize(callId: string, isError: boolean): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    if (isError) {
      this.release(callId);
      return;
    }
    this.leases.delete(callId);
    for (const jobId of lease.observed) {
      this.forgetExit(jobId);
      this.delivery.withdraw(jobId, "jobs");
    }
    for (const jobId of lease.jobs) if (!lease.observed.has(jobId)) this.scheduleExit(jobId);
    for (const jobId of lease.jobs) this.jobCalled(jobId);
  }

  /** A nested call's leases become its outermost call's, and commit when that one is finalized. */
  private transfer(callId: string, toCallId: string): void {
    const lease = this.leases.get(callId);
    if (!lease) return;
    this.leases.delete(callId);
    const target = this.leases.get(toCallId) ?? { jobs: new Set<number>(), observed: new Set<number>() };
    for (const jobId of lease.jobs) target.jobs.add(jobId);
    for (const jobId of lease.observed) target.observed.add(jobId);
    this.leases.set(toCallId, target);
  }

  /** The outermost call `callId` runs in (itself when it is not nested). */
  private rootOf(callId: string): string {
    let current = callId;
    for (let parent = this.parents.get(current); parent; parent = this.parents.get(current)) current = parent;
    return current;
  }

  /**
   * The model called on the job (a poll, a write, a kill): the lines it reads are not announced, the
   * pattern's budget starts over, and a prompt it has now seen needs no input wake.
   */
  private jobCalled(jobId: number): void {
    this.dropInput(jobId);
    this.point.unschedule("patterns", jobId);
    this.patterns.called(jobId);
    this.delivery.withdraw(jobId, "patterns");
  }

  // ---- each kind at the decision point --------------------------------------------------------------

  private exitEligible(jobId: number): boolean {
    const record = this.exits.get(jobId);
    return record?.exit !== undefined && !record.suppressed && !this.leased(jobId);
  }

  private scheduleExit(jobId: number): void {
    if (this.exitEligible(jobId)) this.point.schedule("jobs", jobId);
  }

  private forgetExit(jobId: number): void {
    this.exits.delete(jobId);
    this.point.unschedule("jobs", jobId);
  }

  /** The exit wake that goes out now: remembered for `too_late`, forgotten as a record. */
  private takeExit(jobId: number): WakeJob | undefined {
    const exit = this.exits.get(jobId)?.exit;
    if (!exit) return undefined;
    this.exits.delete(jobId);
    this.delivered.add(jobId);
    for (const old of this.delivered) {
      if (this.delivered.size <= DELIVERED_MEMORY) break;
      this.delivered.delete(old);
    }
    return exit;
  }

  /** A match may go out unless a call holds the job (it reads those lines) or its exit drains (the match goes with the exit). */
  private patternEligible(jobId: number): boolean {
    return this.patterns.pending(jobId) && !this.host.draining(jobId) && !this.leased(jobId);
  }

  private schedulePattern(jobId: number): void {
    if (this.patternEligible(jobId)) this.point.schedule("patterns", jobId);
  }

  /**
   * The level of a notice that follows the job's exit wake (a wait for input; a server gone deaf):
   * the exit's, or `wake` when only a pattern is armed, held back when the turn budget is spent.
   */
  private followingLevel(jobId: number): DecidedLevel {
    return this.budget.decide(this.exits.get(jobId)?.level);
  }

  /** While a wake is armed, no stop is under way, no call holds the job and it still waits at that prompt (asked last: it probes). */
  private inputEligible(jobId: number): boolean {
    return this.inputs.has(jobId) && this.mayFollow(jobId) && this.host.waitsForInput(jobId);
  }

  /** A notice that follows the exit wake (input, deaf) may go out: a wake armed, no stop on purpose under way, no call on the job. */
  private mayFollow(jobId: number): boolean {
    const stopping = this.exits.get(jobId)?.suppressed === true || this.patterns.isHeld(jobId);
    return this.wantsWakes(jobId) && !stopping && !this.leased(jobId);
  }

  private takeInput(jobId: number): InputWakeJob | undefined {
    const wake = this.inputs.get(jobId);
    this.inputs.delete(jobId);
    return wake;
  }

  /** A deaf-server notice may go out while the server is still deaf and {@link mayFollow} (a call's result says it). */
  private deafEligible(jobId: number): boolean {
    return this.deaf.has(jobId) && this.mayFollow(jobId) && !this.host.listensAgain(jobId);
  }

  /** The notice with how long the server has been deaf as it goes out, not as it was queued. */
  private takeDeaf(jobId: number): DeafWakeJob | undefined {
    const queued = this.deaf.get(jobId);
    this.deaf.delete(jobId);
    return queued && { ...queued.wake, closedMs: queued.wake.closedMs + Math.max(0, this.now() - queued.at) };
  }

  /** A call on the job, its exit or a stop: a wait for input it named, or a deaf server, is no news any more. */
  private dropInput(jobId: number): void {
    this.inputs.delete(jobId);
    this.point.unschedule("inputs", jobId);
    this.delivery.withdraw(jobId, "inputs");
    this.deaf.delete(jobId);
    this.point.unschedule("deaf", jobId);
    this.delivery.withdraw(jobId, "deaf");
  }

  /** Sends again what failed to send synchronously (a stale or not-yet-bound API), never during a run. */
  private retry(): void {
    if (!this.point.held) this.delivery.retry();
  }
}
