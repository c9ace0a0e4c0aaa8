import type { CompletionLedger } from "./completion/completion-ledger.ts";
import type { Job, StepResult } from "./job/job.ts";
import {
  type JobListing,
  type JobReport,
  type JobSnapshot,
  type KillReport,
  type NewsFields,
  newsFields,
  type SlotUse,
  type SnapshotContext,
  snapshotOf,
} from "./job/job-snapshot.ts";
import type { Termination } from "./job/job-stop.ts";
import type { JobRegistry } from "./job/registry.ts";
import { type JobFacts, ListingFacts, motionOf } from "./listing-facts.ts";
import type { ShownPart } from "./output/shown-part.ts";
import { type Freshness, type ListenerJob, ListeningPorts } from "./processes/listening.ts";
import { aliveGroups } from "./processes/process-group.ts";
import { oneTableFor } from "./processes/process-table.ts";
import { LISTEN_RECHECK_MS, WARN_JOBS } from "./shared/constants.ts";
import type { TrackedJobs } from "./supervision/tracked-jobs.ts";

/** An `until_listening` wait sees a bind soon: sockets and descriptors are looked at again at every check. */
const LISTEN_FRESHNESS: Freshness = { recheckMs: LISTEN_RECHECK_MS, recheckMaxMs: LISTEN_RECHECK_MS, descriptorsTrustedMs: 0 };

/** What a call's report needs beyond the job's step. */
export type CallStep = StepResult & { window: JobReport["window"]; startMono: number; conditional: boolean };

/**
 * Every report a runtime returns, each built on one {@link JobSnapshot}: a call's, a kill's, a
 * listing's. A report that carries an exit also settles what carrying it means: the job leaves the
 * registry, and a listing or a kill observes the exit for exactly-once completion.
 */
export class JobReports {
  private readonly ports: ListeningPorts;
  /** What each job's previous result showed of its listening addresses (a result says only news). */
  private readonly shownListening = new WeakMap<Job, string>();
  /** The pids each job's previous result named as left running by its shell. */
  private readonly shownBackground = new WeakMap<Job, string>();
  /** What listings read of running jobs, reused while nothing of a job moved (listing-facts.ts). */
  private readonly facts = new ListingFacts();

  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: CompletionLedger<JobReport>,
    private readonly tracked: TrackedJobs,
    markerPrefix: string,
  ) {
    this.ports = new ListeningPorts(markerPrefix);
  }

  snapshot(job: Job, extra: Omit<SnapshotContext, "wakeArmed" | "wakeLevel" | "wakePattern"> = {}): JobSnapshot {
    const wakeLevel = this.completions.exitLevel(job.id);
    return snapshotOf(job, { ...extra, wakeArmed: wakeLevel !== undefined, wakeLevel, wakePattern: this.completions.patternOf(job.id) });
  }

  /**
   * The listening addresses of the running jobs among `jobs`, one scan for all of them (undefined
   * for a job where they cannot be read). What the scan knew of other jobs stays known.
   */
  listening(jobs: readonly Job[], fresh?: Freshness): Map<number, string[]> {
    const scanned: ListenerJob[] = [];
    for (const job of jobs) {
      if (job.exit || job.pid === undefined) continue;
      scanned.push({ jobId: job.id, leader: job.pid, groups: job.groups(), motion: motionOf(job) });
    }
    const running = new Set(this.registry.jobs().flatMap((job) => (job.exit ? [] : [job.id])));
    return this.ports.scan(scanned, fresh, running) ?? new Map();
  }

  /** The facts of the running jobs among `jobs`: reused where nothing of a job moved, else read (one table read for all). */
  private factsOf(jobs: readonly Job[], now: number, inputWait: boolean): Map<number, JobFacts> {
    const running = jobs.filter((job) => !job.exit && job.pid !== undefined);
    return this.facts.of(
      running,
      now,
      (stale, withInputWait) =>
        oneTableFor(() => {
          const ports = this.listening(stale);
          return new Map(
            stale.map((job) => {
              // The scan just read which of the job's processes hold its stdin: only they are probed.
              const inputWait = withInputWait
                ? job.inputWait(undefined, (stdin, tty) => this.ports.stdinHolders(job.id, stdin, tty))
                : undefined;
              return [job.id, { listening: ports.get(job.id), ...(inputWait ? { inputWait } : {}) }];
            }),
          );
        }),
      inputWait,
    );
  }

  /** Reads one job's listening addresses now (an `until_listening` wait checks them this way). */
  listenReader(job: Job): () => string[] | undefined {
    return () => this.listening([job], LISTEN_FRESHNESS).get(job.id);
  }

  /** A job leaves the registry: its exit was reported; a pattern it had is over with it. */
  forget(job: Job): void {
    this.registry.remove(job.id);
    this.completions.disarmPattern(job.id);
  }

  /** What a person did to `job` that the model has not heard yet, taken for the result being built: told once. */
  news(job: Job): NewsFields {
    return newsFields(job.holders.news.take());
  }

  /** A call's report; it removes a job whose exit it carries (a cancelled call carries none). */
  call(job: Job, step: CallStep): JobReport {
    const cancelled = step.end === "aborted";
    if (job.exit && !cancelled) this.forget(job);
    const slots = this.slotUse();
    // One read of the process table serves the input-wait probe and the listening scan. What the shell
    // left, and the addresses an `until_listening` wait ended on, are as the call's wait saw them end.
    const [inputWait, listening, background] = oneTableFor(
      () =>
        [
          job.exit ? undefined : job.inputWait(),
          step.listening ?? this.listening([job]).get(job.id),
          job.backgroundNow(!cancelled, false),
        ] as const,
    );
    const shown = listening?.join(", ") ?? "";
    // A wait `until_listening` ended names the address even when an earlier result showed it.
    const listeningChanged = listening !== undefined && (step.end === "listening" || shown !== (this.shownListening.get(job) ?? ""));
    if (listening !== undefined) this.shownListening.set(job, shown);
    const backgroundChanged = !cancelled && this.newsOfBackground(job, background?.processes.pids);
    const patternsSuspended = cancelled ? undefined : job.holders.takeSuspended();
    return {
      job: this.snapshot(job, { hideExit: cancelled, listening, background }),
      window: step.window,
      waitEnd: step.end,
      wallMs: performance.now() - step.startMono,
      output: step.output ?? { text: "", omittedBytes: 0 },
      ...(step.conditional ? { conditional: true } : {}),
      ...(step.matchedLine !== undefined ? { matchedLine: step.matchedLine } : {}),
      ...(step.screen ? { screen: step.screen } : {}),
      ...(step.input ? { input: step.input } : {}),
      ...(inputWait?.likely ? { inputWait } : {}),
      ...(slots ? { slots } : {}),
      ...(cancelled ? { cancelled } : {}),
      ...(listeningChanged ? { listeningChanged } : {}),
      ...(patternsSuspended ? { patternsSuspended } : {}),
      ...this.news(job),
      ...(backgroundChanged ? { backgroundChanged } : {}),
    };
  }

  /** Whether `pids` (what the job's shell left running now) differ from what its previous result named; remembers them. */
  private newsOfBackground(job: Job, pids: number[] | undefined): boolean {
    const key = pids?.join(",") ?? "";
    const changed = key !== "" && key !== (this.shownBackground.get(job) ?? "");
    this.shownBackground.set(job, key);
    return changed;
  }

  /** `consume`: the result carries the exit and the unread output (the model's kill of a registered job). */
  kill(
    job: Job,
    startMono: number,
    termination: Termination,
    options: { alreadyExited: boolean; consume: boolean; callId: string | undefined; shown: ShownPart | undefined; forModel: boolean },
  ): KillReport {
    if (job.exit && options.consume) {
      this.forget(job);
      // The kill's result reports the exit: it observes it like a poll would.
      this.completions.observed(options.callId, { kind: "kill", jobId: job.id, exitCode: job.exit.exitCode, signal: job.exit.signal });
    }
    const output = options.consume ? job.takeOutput(options.shown) : { text: "", omittedBytes: 0 };
    const news = options.forModel ? this.news(job) : {};
    return {
      job: this.snapshot(job),
      termination,
      alreadyExited: options.alreadyExited,
      wallMs: performance.now() - startMono,
      output,
      ...news,
    };
  }

  /**
   * Every registered job, and every reported job whose groups linger. Exited jobs are listed once
   * more and then forgotten, unless a call is attached to them (that call reports the exit).
   */
  list(callId: string | undefined): JobListing[] {
    // One read of the process table at most serves the prune, the lingering groups and the jobs whose facts are read.
    return oneTableFor(() => this.listOnce(callId));
  }

  private listOnce(callId: string | undefined): JobListing[] {
    this.tracked.prune();
    const now = performance.now();
    const registered = this.registry.jobs();
    const facts = this.factsOf(registered, now, true);
    const listing: JobListing[] = registered.map((job) => {
      const { listening, inputWait } = facts.get(job.id) ?? { listening: undefined };
      const lingering = job.exit !== undefined && aliveGroups(job.groups()).length > 0;
      return {
        ...this.snapshot(job, { now, lingering, listening, background: job.backgroundNow(true) }),
        ...(inputWait?.likely ? { inputWait } : {}),
        ...this.news(job),
      };
    });
    for (const job of this.tracked.lingering(registered))
      listing.push({ ...this.snapshot(job, { now, lingering: true }), alreadyReported: true });
    for (const job of registered) {
      if (!job.exit || job.attached) continue;
      this.forget(job);
      // Listing an exit reports it: it consumes a wake not yet sent.
      this.completions.observed(callId, { kind: "list", jobId: job.id, exitCode: job.exit.exitCode, signal: job.exit.signal });
    }
    return listing;
  }

  /** Running jobs, oldest first, as the footer and the sessions picker show them; `ports` reads their listening addresses. */
  live(options: { ports?: boolean } = {}): JobSnapshot[] {
    const now = performance.now();
    const jobs = this.registry.jobs().filter((job) => !job.exit);
    const facts = options.ports ? this.factsOf(jobs, now, false) : undefined;
    return jobs.map((job) => this.snapshot(job, { now, listening: facts?.get(job.id)?.listening }));
  }

  private slotUse(): SlotUse | undefined {
    const used = this.registry.size;
    return used >= WARN_JOBS ? { used, capacity: this.registry.capacity } : undefined;
  }
}
