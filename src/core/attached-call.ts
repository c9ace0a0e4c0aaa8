import type { CallKind, CompletionLedger, Lease } from "./completion/completion-ledger.ts";
import type { Job } from "./job/job.ts";
import type { TypingSession, UserInput } from "./job/job-holders.ts";
import type { JobReport, JobSnapshot } from "./job/job-snapshot.ts";
import { type ProgressOptions, watchProgress } from "./job/progress.ts";
import { ExecRequestError } from "./shared/errors.ts";

/**
 * How a call lets the user type into a job (`ask_user`): the Pi layer opens the overlay or the dialog
 * with the model's `question`, sends what the user types through `typing`, and resolves once they are
 * done — `true` when they cancelled without sending anything. `job` gives the overlay the live screen.
 */
export type AskTheUser = (typing: TypingSession, job: Job, question: string, signal: AbortSignal | undefined) => Promise<boolean>;

/** Who is asking: the tool call's id (for exactly-once completion), its cancel signal and its UI. */
export interface CallContext extends ProgressOptions {
  signal?: AbortSignal;
  /** The tool call id; its lease is committed when Pi finalizes this call. */
  callId?: string;
  /** Present where a person can be asked (Pi's TUI or an RPC client): `ask_user` needs it. */
  ask?: AskTheUser;
}

/**
 * One call attached to one job, from attaching to its result. The call takes its lease on the job's
 * completion here and settles it here, once; it watches the wait's progress for the UI; and it lets
 * go of the job. Only one call is attached to a job at a time: a second is refused at once.
 */
export class AttachedCall {
  readonly startMono = performance.now();
  /** Aborted when the user steers: the call's wait ends with the output so far. */
  private readonly steering = new AbortController();
  private readonly lease: Lease<JobReport>;
  private readonly stopProgress: () => void;

  constructor(
    private readonly job: Job,
    private readonly kind: Extract<CallKind, "exec" | "write">,
    private readonly call: CallContext,
    private readonly ledger: CompletionLedger<JobReport>,
    snapshot: () => JobSnapshot,
  ) {
    const tool = kind === "exec" ? "exec_command" : "write_stdin";
    if (!job.holders.attach(tool)) {
      throw new ExecRequestError(
        `Session ${job.id} is busy: a ${job.attached} call is attached to it. One call reads or writes a job at a time; ` +
          "wait for that call to return, or stop the job with kill_session.",
      );
    }
    this.lease = ledger.lease(call.callId, job.id);
    // A call previews what it will return: everything not read yet, shown at once, then what arrives.
    this.stopProgress = watchProgress(job, job.outputBytesRead, call, snapshot);
  }

  /**
   * `ask_user`: the user types into the job while this call stays attached (no time limit: they end
   * it, or the job's end closes the dialog: `typing.closed`); the count of what they typed is this
   * call's to report — `0 bytes`, not cancelled, when the job ended before they answered.
   */
  async askTheUser(question: string): Promise<UserInput> {
    const typing = this.job.startTyping("caller");
    if (!typing) return { bytes: 0, cancelled: false }; // the job ended meanwhile: its exit is the news
    let cancelled = true;
    try {
      cancelled = await this.call.ask!(typing, this.job, question, this.call.signal);
    } finally {
      typing.end(cancelled);
    }
    return typing.input;
  }

  /** Fires when the user steers while this call waits. */
  get steer(): AbortSignal {
    return this.steering.signal;
  }

  /** The user typed a message Pi delivers as a steer: this call's wait ends now. */
  steered(): void {
    this.steering.abort();
  }

  /**
   * The call ends: with its report, or undefined after a throw. A report that carries the exit
   * observes it (`wake: consumed` when it had a wake armed); otherwise the lease is released, and a
   * wake still armed is said (`wake: armed`).
   */
  end(report: JobReport | undefined): JobReport | undefined {
    this.stopProgress();
    const exit = report?.job.exit;
    const observed = exit && { kind: this.kind, jobId: this.job.id, exitCode: exit.exitCode, signal: exit.signal };
    let consumed: boolean;
    try {
      consumed = this.lease.settle(report, observed);
    } finally {
      // After the lease: settling drops the matches of what the call read, not of what it left unread.
      this.job.detachCall();
    }
    if (!report) return undefined;
    if (consumed) report.wake = "consumed";
    else if (!exit && this.ledger.exitLevel(this.job.id)) {
      report.wake = "armed";
      if (this.ledger.exitLevel(this.job.id) === "next_turn") report.wakeLevel = "next_turn";
    }
    return report;
  }
}
