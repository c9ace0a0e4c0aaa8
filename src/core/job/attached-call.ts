/*
 * One call attached to one job, from attaching to its result: the busy refusal, the call's lease on
 * the job's completion taken and settled here once, `ask_user`'s typing, the wait's progress for the
 * UI, and the call's turn (resize, send, wait, read).
 */
import type { JobInput } from "../request/input.ts";
import type { ScreenView } from "../screen/job-screen.ts";
import type { TerminalSize } from "../screen/terminal-size.ts";
import { UPDATE_INTERVAL_MS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import type { CallWait, UntilSpec } from "../wait/call-wait.ts";
import type { ListenReader } from "../wait/listen-watch.ts";
import type { Job, WaitEnd, WaitEnds } from "./job.ts";
import type { TypingSession, UserInput } from "./job-holders.ts";
import type { OutputDelta } from "./job-output.ts";
import type { JobReport, JobSnapshot, WaitProgress } from "./job-snapshot.ts";
import type { InputOutcome } from "./job-stdin.ts";

/** `ask_user` in the Pi layer: the overlay or a dialog with the model's `question`; true when the user cancelled without sending. */
export type AskTheUser = (typing: TypingSession, job: Job, question: string, signal: AbortSignal | undefined) => Promise<boolean>;

/** Who wants to hear about a wait's progress, and how often when nothing happens. */
export interface ProgressOptions {
  onProgress?: ((progress: WaitProgress) => void) | undefined;
  quietRefreshMs?: number | undefined;
}

/** Who is asking: the tool call's id (for exactly-once completion), its cancel signal and its UI. */
export interface CallContext extends ProgressOptions {
  signal?: AbortSignal;
  /** The tool call id; its lease is committed when Pi finalizes this call. */
  callId?: string;
  /** Present where a person can be asked (Pi's TUI or an RPC client): `ask_user` needs it. */
  ask?: AskTheUser;
}

/** Which kind of call reported an exit (the Pi layer names the tool). */
export type CallKind = "exec" | "write" | "kill" | "list";

/** A job's end as a call reported it, for receipts. */
export interface ObservedExit {
  kind: CallKind;
  jobId: number;
  exitCode: number | null;
  signal: string | null;
}

/** A call's hold on one job, from attaching to its result. */
export interface Lease<Report> {
  /**
   * The call returns `report`; `exit` when the report carries the job's exit. Returns whether that
   * consumed an armed wake. Without `exit` (or after a throw: `settle(undefined)`) the lease is released.
   */
  settle(report: Report | undefined, exit?: ObservedExit): boolean;
}

/** What calls and reports ask of the completion ledger (completion/ comes after job/ and keeps it). */
export interface WakeLedger {
  lease(callId: string | undefined, jobId: number): Lease<JobReport>;
  /** The level of the job's armed exit wake; undefined when none is armed. */
  exitLevel(jobId: number): "wake" | "next_turn" | undefined;
  patternOf(jobId: number): string | undefined;
  disarmPattern(jobId: number): boolean;
  observed(callId: string | undefined, exit: ObservedExit): void;
}

/** One call at a time is attached to a job: a second is refused at once. */
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
    private readonly ledger: WakeLedger,
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

  /** `ask_user`: the user types while this call stays attached, with no time limit; the count is this call's to report. */
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

  /** The call ends (`report` undefined after a throw): a report carrying the exit observes it, else the lease is released. */
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

/**
 * A wait's progress: at once when output already waits for the call, else at the first check (a call
 * that ends sooner costs Pi no update; the row draws its own clock); then every 250 ms as output
 * arrives, and when quiet only every `quietRefreshMs` if set.
 */
function watchProgress(job: Job, sinceTotal: number, call: ProgressOptions, snapshot: () => JobSnapshot): () => void {
  const { onProgress, quietRefreshMs } = call;
  if (!onProgress) return () => {};
  const start = performance.now();
  let seen = job.outputBytesTotal;
  let last = start;
  let reported = false;
  const report = (now: number, total: number) => {
    reported = true;
    try {
      onProgress({ job: snapshot(), preview: job.previewText(sinceTotal), outputBytes: total - sinceTotal, elapsedMs: now - start });
    } catch {
      // The UI failing to draw must not end the wait.
    }
  };
  if (seen > sinceTotal) report(start, seen);
  const timer = setInterval(() => {
    const now = performance.now();
    const total = job.outputBytesTotal;
    if (reported && total === seen && (quietRefreshMs === undefined || now - last < quietRefreshMs)) return;
    seen = total;
    last = now;
    report(now, total);
  }, UPDATE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** One call's turn with a job: what to change first, how long to stay, and what else may end it. */
export interface StepPlan extends WaitEnds {
  resize?: TerminalSize;
  input?: JobInput;
  deadlineMono: number;
  /** A conditional wait: return once a line matches, the job goes quiet or it listens. */
  until?: UntilSpec;
  /** Reads the job's listening addresses, for `until_listening`. */
  readListening?: ListenReader;
  /** `screen` as the call gave it: true the screen, false the stream, absent the screen on the alternate screen. */
  screen?: boolean;
}

/** What a turn did: how its wait ended, what its input came to, and the output since the previous read. */
export interface StepResult {
  end: WaitEnd;
  input?: InputOutcome;
  /** Absent for a cancelled call: it reads nothing. */
  output?: OutputDelta;
  /** The line `until_pattern` matched (bounded), when that ended the wait. */
  matchedLine?: string;
  /** The addresses read by the check `until_listening` ended on, when it did: the result shows them. */
  listening?: string[];
  /** `until_listening` with a URL: the HTTP status of the answer that ended the wait. */
  httpStatus?: number;
  /** The screen the result shows instead of the stream (PTY jobs; see {@link JobScreen.view}). */
  screen?: ScreenView;
}

/** What a call wrote, as text, for the terminal's echo of it. */
function writtenText(input: JobInput): string {
  if (input.kind === "bytes") return input.bytes.toString("utf8");
  return input.kind === "interrupt" ? "\x03" : "\x04";
}

/**
 * One call's turn: resize first (what the input starts sees the new size), start the conditional
 * wait (it sees the output not yet returned first), send, wait, then take the output up to and
 * including a matched line. A cancelled call reads nothing: the job stays as it was for the next call.
 */
export async function stepJob(job: Job, plan: StepPlan): Promise<StepResult> {
  if (plan.resize && !job.ending) job.resize(plan.resize);
  const watch = plan.until ? job.watchUntil(plan.until, plan.readListening) : undefined;
  if (watch && plan.input && job.tty) watch.wrote(writtenText(plan.input));
  const input = plan.input ? await job.send(plan.input, plan.deadlineMono) : undefined;
  const end = await job.wait(plan.deadlineMono, { ...plan, ...(watch ? { condition: watch.met } : {}) });
  return { ...(await endTurn(job, end, watch, plan)), ...(input ? { input } : {}) };
}

/**
 * The end of a call's wait, `exec_command`'s and `write_stdin`'s: what it matched or heard listening,
 * and the output up to and including a matched line (what follows stays for the next read). `beforeRead`
 * runs just before the output is taken.
 */
export async function endTurn(
  job: Job,
  waitEnd: WaitEnd,
  watch: CallWait | undefined,
  plan: Pick<StepPlan, "signal" | "screen">,
  beforeRead?: () => void,
): Promise<StepResult> {
  watch?.stop();
  // A cancelled call (Esc) gives control back at once and consumes nothing, even an exit it saw.
  const end = plan.signal?.aborted ? "aborted" : waitEnd;
  const matchedLine = end === "matched" ? watch?.matchedLine() : undefined;
  const listening = end === "listening" ? watch?.listening() : undefined;
  const httpStatus = end === "listening" ? watch?.httpStatus() : undefined;
  // Only a match keeps what follows it for the next read; the exit's report carries everything.
  if (end !== "matched") job.endWatch();
  beforeRead?.();
  const output = end === "aborted" ? undefined : job.takeOutput();
  const screen = output ? await job.screenView(plan.screen) : undefined;
  return {
    end,
    ...(output ? { output } : {}),
    ...(matchedLine ? { matchedLine } : {}),
    ...(listening ? { listening } : {}),
    ...(httpStatus !== undefined ? { httpStatus } : {}),
    ...(screen ? { screen } : {}),
  };
}
