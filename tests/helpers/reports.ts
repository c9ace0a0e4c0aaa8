/**
 * Reading the runtime's reports in tests, and building them by hand for the result formatters'
 * tests. A report embeds the job's snapshot; the builders merge a test's base and its overrides
 * part by part (`job`, `output`, `termination`), so a test names only the fields it is about.
 */
import type { OutputDelta } from "../../src/core/job/job-output.ts";
import type { JobListing, JobReport, JobSnapshot, KillReport } from "../../src/core/job/job-snapshot.ts";
import type { Termination } from "../../src/core/job/job-stop.ts";

/** The id the model gets back while the job runs (its `session_id`); undefined once the report carries the exit. */
export function runningId(report: JobReport): number | undefined {
  return report.job.exit ? undefined : report.job.jobId;
}

/** A snapshot with neutral values for every field a test does not give. */
export function snapshot(...parts: Partial<JobSnapshot>[]): JobSnapshot {
  return {
    jobId: 1,
    command: "true",
    cwd: "/",
    tty: false,
    elapsedMs: 0,
    quietMs: 0,
    outputBytesTotal: 0,
    outputReads: 1,
    logPath: "/l",
    wakeArmed: false,
    attached: false,
    ...Object.assign({}, ...parts),
  };
}

export type ReportParts = Partial<Omit<JobReport, "job" | "output">> & { job?: Partial<JobSnapshot>; output?: Partial<OutputDelta> };

/** An `exec_command`/`write_stdin` report: `base` (the test's usual job), then `over`. */
export function jobReport(base: ReportParts, over: ReportParts = {}): JobReport {
  return {
    window: { ms: 10_000 },
    waitEnd: "exited",
    wallMs: 0,
    ...base,
    ...over,
    job: snapshot(base.job ?? {}, over.job ?? {}),
    output: { text: "", omittedBytes: 0, ...base.output, ...over.output },
  };
}

export type KillParts = Partial<Omit<KillReport, "job" | "output" | "termination">> & {
  job?: Partial<JobSnapshot>;
  output?: Partial<OutputDelta>;
  termination?: Partial<Termination>;
};

/** A `kill_session` report: `base`, then `over`. */
export function killReport(base: KillParts, over: KillParts = {}): KillReport {
  return {
    alreadyExited: false,
    wallMs: 0,
    ...base,
    ...over,
    job: snapshot(base.job ?? {}, over.job ?? {}),
    output: { text: "", omittedBytes: 0, ...base.output, ...over.output },
    termination: { signal: "SIGTERM", escalated: false, cleanup: "confirmed", survivors: [], ...base.termination, ...over.termination },
  };
}

/** One job of a listing: `base`, then `over`. */
export function listing(base: Partial<JobListing>, over: Partial<JobListing> = {}): JobListing {
  return snapshot(base, over);
}
