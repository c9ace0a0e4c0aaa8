import type { InputWait } from "../input-wait/input-wait.ts";
import {
  CALL_SCAN,
  type Deafness,
  type Freshness,
  LISTEN_SCAN,
  LISTING_SCAN,
  type ListenerJob,
  ListeningPorts,
  type Usage,
} from "../processes/listening.ts";
import { bindFailures, failedPorts, portHolder } from "../processes/port-conflicts.ts";
import { aliveGroups } from "../processes/process-group.ts";
import { oneTableFor, processTable } from "../processes/process-table.ts";
import { INPUT_WAIT_QUIET_MS, WARN_JOBS } from "../shared/constants.ts";
import type { StepResult, WakeLedger } from "./attached-call.ts";
import type { Job } from "./job.ts";
import {
  type JobListing,
  type JobReport,
  type JobSnapshot,
  type KillReport,
  type NewsFields,
  newsFields,
  type PortConflict,
  portConflictText,
  type SlotUse,
  type SnapshotContext,
  snapshotOf,
  type WakeJob,
  wakeOf,
} from "./job-snapshot.ts";
import type { Termination } from "./job-stop.ts";
import type { JobRegistry } from "./registry.ts";

/** What a listing reads of a running job from the operating system. */
interface JobFacts {
  listening: string[] | undefined;
  deaf?: Deafness | undefined;
  usage?: Usage | undefined;
  inputWait?: InputWait;
}

/** Changes whenever the job moves: a byte of output, a send's start or end, its shell's exit, crossing the input-wait quiet time. */
export function stampOf(job: Job, now: number = performance.now()): string {
  return `${job.outputBytesTotal}:${job.stdin.movements}:${job.leaderExited}:${job.quietMs(now) >= INPUT_WAIT_QUIET_MS}`;
}

/** What reports need of the jobs supervision/ tracks: all of them, the prune of finished ones, and reported jobs whose groups linger. */
export interface TrackedView {
  all(): Job[];
  prune(): void;
  lingering(except: readonly Job[]): Job[];
}

const MB = 1024 * 1024;

/** Whether a job's memory changed enough since a result last showed it to be said again: ±100 MB, or doubled or halved from 50 MB up. */
export function noticeable(shownBytes: number | undefined, nowBytes: number): boolean {
  const shown = shownBytes ?? 0;
  if (Math.abs(nowBytes - shown) >= 100 * MB) return true;
  return nowBytes >= 50 * MB && (nowBytes >= 2 * shown || nowBytes <= shown / 2);
}

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
  /** The memory each job's previous result showed (a result says it again when it changed noticeably). */
  private readonly shownUsage = new WeakMap<Job, number>();
  /** The pids each job's previous result named as left running by its shell. */
  private readonly shownBackground = new WeakMap<Job, string>();
  /** The input wait a listing read beside each job's latest port scan: reused with it. */
  private readonly inputWaits = new WeakMap<Job, { readAt: number | undefined; wait: InputWait }>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly completions: WakeLedger,
    private readonly tracked: TrackedView,
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
  listening(jobs: readonly Job[], fresh: Freshness = CALL_SCAN): Map<number, string[]> {
    const now = performance.now();
    const scanned = jobs.flatMap((job) => (job.exit || job.pid === undefined ? [] : [this.listenerJob(job, now)]));
    const running = new Set(this.registry.jobs().flatMap((job) => (job.exit ? [] : [job.id])));
    return this.ports.scan(scanned, fresh, running) ?? new Map();
  }

  /**
   * A listing's facts of the running jobs among `jobs`: a job that did not move within a second is
   * answered from its previous read, its input wait with it; the others with one table read.
   */
  private factsOf(jobs: readonly Job[], withInputWait: boolean): Map<number, JobFacts> {
    const running = jobs.filter((job) => !job.exit && job.pid !== undefined);
    return oneTableFor(() => {
      const ports = this.listening(running, LISTING_SCAN);
      return new Map(
        running.map((job) => [
          job.id,
          {
            listening: ports.get(job.id),
            deaf: this.ports.deafness(job.id),
            usage: this.ports.usage(job.id),
            ...(withInputWait ? { inputWait: this.inputWaitOf(job) } : {}),
          },
        ]),
      );
    });
  }

  private inputWaitOf(job: Job): InputWait {
    const readAt = this.ports.readAt(job.id);
    const known = this.inputWaits.get(job);
    if (known && readAt !== undefined && known.readAt === readAt) return known.wait;
    // The scan just read which of the job's processes hold its stdin: only they are probed.
    const wait = job.inputWait(undefined, (stdin, tty) => this.ports.stdinHolders(job.id, stdin, tty));
    this.inputWaits.set(job, { readAt, wait });
    return wait;
  }

  /** Each running job's memory now, from one table read (the monitor's cap). */
  measure(jobs: readonly Job[]): Map<number, Usage> | undefined {
    return this.ports.measure(jobs.flatMap((job) => (job.pid === undefined ? [] : [this.listenerJob(job)])));
  }

  /** The deaf servers among `jobs` (those that listened, scanned as a listing would). */
  deafness(jobs: readonly Job[]): Map<number, Deafness> {
    const servers = jobs.filter((job) => this.ports.listened(job.id));
    if (servers.length > 0) this.listening(servers, LISTING_SCAN);
    const deaf = new Map<number, Deafness>();
    for (const job of servers) {
      const loss = this.ports.deafness(job.id);
      if (loss) deaf.set(job.id, loss);
    }
    return deaf;
  }

  /** The job's server is deaf at its latest read (no new scan: the monitor reads once a second). */
  stillDeaf(jobId: number): boolean {
    return this.ports.deafness(jobId) !== undefined;
  }

  /** The held ports among those `text` says the job could not get, with who holds each. */
  portConflicts(job: Job, text: string | undefined): PortConflict[] | undefined {
    const ports = text ? failedPorts(bindFailures(text), job.command) : [];
    const conflicts = ports.flatMap((port) => {
      const holder = portHolder(port);
      if (!holder) return [];
      const owner = this.ownerOf(holder.pid);
      return [{ port, ...holder, ...(owner ? { job: { jobId: owner.id, command: owner.command } } : {}) }];
    });
    return conflicts.length > 0 ? conflicts : undefined;
  }

  /** The job of this runtime a process belongs to: by its marker (Linux), else by its process group. */
  private ownerOf(pid: number): Job | undefined {
    const jobs = this.tracked.all();
    const marked = this.ports.markedJob(pid);
    if (marked !== undefined) return jobs.find((job) => job.id === marked);
    const pgid = processTable()?.find((entry) => entry.pid === pid)?.pgid;
    return pgid === undefined ? undefined : jobs.find((job) => !job.exit && job.groups().includes(pgid));
  }

  /** The exit as its wake says it, with the ports its last output says it could not get. */
  exitWake(job: Job): WakeJob {
    const wake = wakeOf(this.snapshot(job));
    const conflicts = this.portConflicts(job, job.previewText());
    if (!conflicts) return wake;
    const reasons = [wake.reason, `port_conflict: ${portConflictText(conflicts, (text) => text)}`];
    return { ...wake, reason: reasons.filter(Boolean).join("; ") };
  }

  private listenerJob(job: Job, now = performance.now()): ListenerJob {
    // A getter: a job's groups read the process table, which a job answered from the cache never needs.
    return {
      jobId: job.id,
      leader: job.pid!,
      stamp: stampOf(job, now),
      get groups() {
        return job.groups();
      },
    };
  }

  /** Reads one job's listening addresses now (an `until_listening` wait checks them this way, every 100 ms: one table read each). */
  listenReader(job: Job): () => string[] | undefined {
    return () => oneTableFor(() => this.listening([job], LISTEN_SCAN).get(job.id));
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
  async call(job: Job, step: CallStep): Promise<JobReport> {
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
    const deaf = listening !== undefined && !job.exit ? this.ports.deafness(job.id) : undefined;
    const usage = job.exit ? undefined : this.ports.usage(job.id);
    const shown = deaf ? `none, was ${deaf.was.join(", ")}` : (listening?.join(", ") ?? "");
    // A wait `until_listening` ended names the address even when an earlier result showed it.
    const listeningChanged = listening !== undefined && (step.end === "listening" || shown !== (this.shownListening.get(job) ?? ""));
    if (listening !== undefined) this.shownListening.set(job, shown);
    const usageChanged = usage !== undefined && noticeable(this.shownUsage.get(job), usage.rssBytes);
    if (usageChanged) this.shownUsage.set(job, usage.rssBytes);
    const portConflicts = cancelled ? undefined : this.portConflicts(job, step.output?.text);
    const backgroundChanged = !cancelled && this.newsOfBackground(job, background?.processes.pids);
    const patternsSuspended = cancelled ? undefined : job.holders.takeSuspended();
    const report: JobReport = {
      job: this.snapshot(job, { hideExit: cancelled, listening, deaf, usage, background }),
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
      ...(usageChanged ? { usageChanged } : {}),
      ...(portConflicts ? { portConflicts } : {}),
      ...(step.httpStatus !== undefined ? { httpStatus: step.httpStatus } : {}),
      ...(patternsSuspended ? { patternsSuspended } : {}),
      ...this.news(job),
      ...(backgroundChanged ? { backgroundChanged } : {}),
    };
    // Where a prompt waits on a terminal, a result reads whether it hides what is typed, fresh; the
    // report is whole before the read, so nothing the job does meanwhile is half in it. A call given
    // back at once (cancelled, steered) takes the last read instead of waiting for one.
    if (report.inputWait && job.tty) {
      const atOnce = cancelled || step.end === "steered";
      if (atOnce ? job.knownHidesTyping() : await job.hidesTyping()) report.inputWait = { ...report.inputWait, secret: true };
    }
    return report;
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
    options: {
      alreadyExited: boolean;
      consume: boolean;
      callId: string | undefined;
      forModel: boolean;
      ports?: Pick<KillReport, "portsReleased" | "portsStillHeld">;
    },
  ): KillReport {
    if (job.exit && options.consume) {
      this.forget(job);
      // The kill's result reports the exit: it observes it like a poll would.
      this.completions.observed(options.callId, { kind: "kill", jobId: job.id, exitCode: job.exit.exitCode, signal: job.exit.signal });
    }
    const output = options.consume ? job.takeOutput() : { text: "", omittedBytes: 0 };
    const news = options.forModel ? this.news(job) : {};
    return {
      job: this.snapshot(job),
      termination,
      alreadyExited: options.alreadyExited,
      wallMs: performance.now() - startMono,
      output,
      ...options.ports,
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
    const facts = this.factsOf(registered, true);
    const listing: JobListing[] = registered.map((job) => {
      const { listening, deaf, usage, inputWait } = facts.get(job.id) ?? { listening: undefined };
      const lingering = job.exit !== undefined && aliveGroups(job.groups()).length > 0;
      return {
        ...this.snapshot(job, { now, lingering, listening, deaf, usage, background: job.backgroundNow(true) }),
        // A listing cannot wait for the terminal: it says what was last read where the job has not moved since.
        ...(inputWait?.likely ? { inputWait: job.knownHidesTyping() ? { ...inputWait, secret: true as const } : inputWait } : {}),
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
    const facts = options.ports ? this.factsOf(jobs, false) : undefined;
    return jobs.map((job) => this.snapshot(job, { now, ...facts?.get(job.id) }));
  }

  private slotUse(): SlotUse | undefined {
    const used = this.registry.size;
    return used >= WARN_JOBS ? { used, capacity: this.registry.capacity } : undefined;
  }
}
