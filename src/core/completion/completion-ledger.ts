/*
 * completion/ — exactly-once delivery of what a job has to tell the model when nobody is watching:
 * every wake kind goes through this ledger (leases, observations, nesting, replays, suppression) and
 * its private batcher (wakes.ts); nothing sends a wake beside it.
 *
 * May import: shared.
 */
import { RECEIPT_MAX_KEPT, RECEIPT_MAX_SHOWN } from "../shared/constants.ts";
import {
  CompletionCoordinator,
  type DeafWakeJob,
  type InputWakeJob,
  type SetOnExitStatus,
  type WakeBatch,
  type WakeHost,
  type WakeJob,
  type WakeSender,
} from "./wakes.ts";

/**
 * Exactly-once completion, owned here and nowhere else.
 *
 * Invariant: while Pi runs, the end of a job whose wake is armed reaches the model through a
 * finalized tool result **or** one wake prompt — never both, never neither.
 *
 * The rules that keep it, all in this module:
 * 1. Arming: `exec_command` arms a wake only when it hands back a live id; `set_on_exit` arms or
 *    disarms later, also for an exited job whose wake has not gone out.
 * 2. Leases: a call attached to a job leases it, and while any lease on it is held its wake waits.
 * 3. Settling: a call whose result carries the exit has observed it; the wake is consumed when Pi
 *    finalizes that call without an error. A result without the exit, a cancel, a throw or an error
 *    result releases the lease, and the wake stays eligible.
 * 4. A listing that reports an exit, and a `kill_session` that reports one, observe it the same way.
 * 5. A stop on purpose (a kill by the model or the user, shutdown) holds the wake back before any
 *    signal; a kill that fails gives it back, one that worked drops it.
 * 6. Nesting: a call inside another tool's call (`ctx.executeTool`) hands what it observed to the
 *    outermost call, committed when that one is finalized; the outermost result gets a receipt naming
 *    the exits; a nested read of a job whose exit an earlier nested read reported replays that result
 *    until the outermost call is finalized.
 * 7. Delivery: an eligible exit with no lease is scheduled, and exits close together go out as one
 *    prompt ({@link CompletionCoordinator}, private to this module); shutdown drops every pending wake.
 *    One decision point (decision-point.ts): while Pi runs, every wake is held; when the run settles
 *    each is re-checked (still unobserved, armed, not stopped, not read) and only then sent. Nothing
 *    enters Pi's follow-up queue that a later call of the same run could observe.
 * 8. Pattern wakes (`wake_on_pattern`) are wakes of a second kind, through the same batches: a line
 *    a job prints while no call is attached may announce itself, after a cooldown and within a
 *    budget; a call on the job (it reads those lines) drops what waits. They never touch the exit's
 *    wake, and stops, boundaries and shutdown drop them as they drop exits. A line wakes at most
 *    once; a match during the exit's drain waits for the exit and goes with it.
 * 9. Input wakes are a third kind, through the same decision point: a job with a wake armed that has
 *    waited for input long enough, untouched, says so once; a call on the job, its exit or a stop drops it.
 *
 * Knows nothing of Pi: call ids are plain strings, the sender is bound from outside.
 */

/** Which kind of call reported an exit (the Pi layer names the tool). */
export type CallKind = "exec" | "write" | "kill" | "list";

/** A job's end as a call reported it, for receipts. */
export interface ObservedExit {
  kind: CallKind;
  jobId: number;
  exitCode: number | null;
  signal: string | null;
}

/** The exits calls nested inside one outermost call reported: the last few, and how many in all. */
export interface Receipt {
  exits: ObservedExit[];
  total: number;
}

/** A call's hold on one job, from attaching to its result. */
export interface Lease<Report> {
  /**
   * The call returns `report`; `exit` when the report carries the job's exit. Returns whether that
   * consumed an armed wake. Without `exit` (or after a throw: `settle(undefined)`) the lease is released.
   */
  settle(report: Report | undefined, exit?: ObservedExit): boolean;
}

export class CompletionLedger<Report> {
  private readonly wakes: CompletionCoordinator;
  /** Call → the call it runs inside (nested calls only). */
  private readonly parents = new Map<string, string>();
  /** Exits each nested call reported, until it ends and hands them to its outermost call. */
  private readonly observations = new Map<string, ObservedExit[]>();
  /** Per outermost call: the exits its nested calls reported, named once each. */
  private readonly receipts = new Map<string, { kept: ObservedExit[]; total: number; jobs: Set<number> }>();
  /** Results saved for repeated nested reads, by job id, until their outermost call is finalized. */
  private readonly replays = new Map<number, { scope: string; report: Report }>();
  private unquotable: (jobId: number) => boolean = () => false;

  /** `host`: which job drains its last output after its leader exited (see {@link WakeHost}). */
  constructor(host?: WakeHost) {
    this.wakes = new CompletionCoordinator(undefined, undefined, undefined, undefined, host);
  }

  // ---- the Pi layer's side ------------------------------------------------------------------------

  /** Binds delivery (a new Pi API after reload), or unbinds it (`undefined`: batches wait). */
  bindSender(sender: WakeSender | undefined): void {
    // The last moment before Pi: whenever a wake was decided, a job typed into by then is not quoted.
    this.wakes.setSender(sender && ((batch) => sender(withheldLines(batch, this.unquotable))));
    if (sender) this.wakes.retry();
  }

  /**
   * Tells which jobs' output no wake may quote (a person typed into them): their pattern wakes go
   * out with the line withheld, checked as each batch is handed to Pi.
   */
  withholdOutputOf(unquotable: (jobId: number) => boolean): void {
    this.unquotable = unquotable;
  }

  /** Sends again what failed to send synchronously (a stale or not-yet-bound API). */
  retry(): void {
    this.wakes.retry();
  }

  /** Pi started a run (`before_agent_start`, `agent_start`): wakes are held until it settles. */
  runStarted(): void {
    this.wakes.runStarted();
  }

  /** Pi's run settled (`agent_settled`): held wakes are re-checked, and those still due go out as one prompt. */
  runSettled(): void {
    this.wakes.runSettled();
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
      this.wakes.finalize(callId, isError);
      for (const [jobId, replay] of this.replays) if (replay.scope === callId) this.replays.delete(jobId);
      this.receipts.delete(callId);
      return;
    }
    const root = this.rootOf(callId);
    this.parents.delete(callId);
    if (isError) {
      this.wakes.release(callId);
      return;
    }
    this.wakes.transfer(callId, root);
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

  arm(jobId: number): void {
    this.wakes.arm(jobId);
  }

  isArmed(jobId: number): boolean {
    return this.wakes.isArmed(jobId);
  }

  /** Knows the job: armed, ended with its wake on its way (a tombstone), or just woken. */
  knows(jobId: number): boolean {
    return this.wakes.knows(jobId);
  }

  setOnExit(jobId: number, policy: "none" | "wake", jobExited: boolean): SetOnExitStatus {
    return this.wakes.setOnExit(jobId, policy, jobExited);
  }

  /** The job's exit is final: its wake goes out once nobody watching it remains. */
  jobExited(job: WakeJob): void {
    this.wakes.jobExited(job);
  }

  /** Arms or replaces the job's `wake_on_pattern`. */
  armPattern(jobId: number, pattern: string, command: string): void {
    this.wakes.armPattern(jobId, pattern, command);
  }

  /** Disarms the job's pattern; false when none was armed. */
  disarmPattern(jobId: number): boolean {
    return this.wakes.disarmPattern(jobId);
  }

  /** The job's armed pattern, if any. */
  patternOf(jobId: number): string | undefined {
    return this.wakes.patternOf(jobId);
  }

  /** The model called on the job (see {@link CompletionCoordinator.jobCalled}). */
  jobCalled(jobId: number): void {
    this.wakes.jobCalled(jobId);
  }

  /** Lines of the job matched its pattern while no call was attached, in output ending at byte `end` of its stream. */
  patternHit(jobId: number, line: string, count: number, end?: number): void {
    this.wakes.patternHit(jobId, line, count, end);
  }

  /** Where the job's output was last announced up to by a pattern wake: those lines never wake again. */
  patternAnnouncedThrough(jobId: number): number {
    return this.wakes.patternAnnouncedThrough(jobId);
  }

  /** The job has waited for input long enough while its wake is armed: one wake, through the decision point. */
  inputWaits(wake: InputWakeJob): void {
    this.wakes.inputWaits(wake);
  }

  /** A server of the job went deaf: one notice at the next decision (see `CompletionCoordinator.deafServer`). */
  deafServer(wake: DeafWakeJob): void {
    this.wakes.deafServer(wake);
  }

  /** The job has a wake armed (its exit's or a pattern): only such a job may wake the model for a prompt. */
  wantsWakes(jobId: number): boolean {
    return this.wakes.isArmed(jobId) || this.wakes.patternOf(jobId) !== undefined;
  }

  /**
   * A call attaches to a job. It is a call of the model on the job: matches waiting to be announced are
   * its to read. Without a call id (a caller outside Pi) nothing is leased.
   */
  lease(callId: string | undefined, jobId: number): Lease<Report> {
    this.wakes.jobCalled(jobId);
    if (callId === undefined) return { settle: () => false };
    this.wakes.lease(callId, jobId);
    return {
      settle: (report, exit) => {
        if (!report || !exit) {
          this.wakes.release(callId);
          return false;
        }
        const consumed = this.wakes.isArmed(jobId);
        this.observe(callId, exit);
        if (this.parents.has(callId)) this.replays.set(jobId, { scope: this.rootOf(callId), report });
        return consumed;
      },
    };
  }

  /** A result carries a job's exit without a lease (a listing, a kill, an exit inside exec's window). */
  observed(callId: string | undefined, exit: ObservedExit): void {
    if (callId !== undefined) this.observe(callId, exit);
  }

  /** The result an earlier nested read inside the same outermost call reported for `jobId`, if any. */
  replay(callId: string | undefined, jobId: number): Report | undefined {
    const replay = this.replays.get(jobId);
    if (!replay || callId === undefined || !this.parents.has(callId)) return undefined;
    return this.rootOf(callId) === replay.scope ? replay.report : undefined;
  }

  /** Holds a job's wake back before it is stopped on purpose; returns `restore` for a stop that failed. */
  hold(jobId: number): () => void {
    return this.wakes.suppress(jobId);
  }

  /** The job was stopped on purpose: its wake is gone for good. */
  drop(jobId: number): void {
    this.wakes.dropWake(jobId);
  }

  /** Shutdown: every pending wake is dropped, nothing more is sent. */
  dropAll(): void {
    this.wakes.dropAll();
  }

  /** Wakes scheduled and not yet sent, plus batches waiting for a retry (for tests). */
  get waiting(): number {
    return this.wakes.waiting;
  }

  private observe(callId: string, exit: ObservedExit): void {
    this.wakes.observed(callId, exit.jobId);
    if (!this.parents.has(callId)) return;
    const list = this.observations.get(callId) ?? [];
    list.push(exit);
    this.observations.set(callId, list);
  }

  /** The outermost call `callId` runs in (itself when it is not nested). */
  private rootOf(callId: string): string {
    let current = callId;
    for (let parent = this.parents.get(current); parent; parent = this.parents.get(current)) current = parent;
    return current;
  }
}

/** `batch` with the line of every pattern or input wake of an `unquotable` job withheld. */
function withheldLines(batch: WakeBatch, unquotable: (jobId: number) => boolean): WakeBatch {
  const quoted = (wake: { jobId: number }) => unquotable(wake.jobId);
  if (!batch.patterns?.some(quoted) && !batch.inputs?.some(quoted)) return batch;
  const patterns = batch.patterns?.map((wake) => (quoted(wake) ? { ...wake, line: "", lineWithheld: true } : wake));
  const unquoted = ({ line: _line, ...wake }: InputWakeJob): InputWakeJob => ({ ...wake, withheld: true });
  const inputs = batch.inputs?.map((wake) => (quoted(wake) ? unquoted(wake) : wake));
  return { ...batch, ...(patterns ? { patterns } : {}), ...(inputs ? { inputs } : {}) };
}
