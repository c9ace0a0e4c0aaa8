/**
 * Part of `npm run bench` (and `npm run bench:speak-up` alone): what jobs that speak up cost.
 * - A 200 MB flood that nobody reads (no call attached: that is when `wake_on_pattern` runs) with a
 *   pattern that never matches, against the same flood without one, interleaved, in one runtime in
 *   this process: the time from spawn to the exit, median of the rounds.
 * - The scan of listening addresses for 64 running jobs of 10 processes each: the first scan (every
 *   process's descriptors read) and the steady one (the same sockets: nothing but /proc/net and the
 *   process table), with one job listening and holding a client and an accepted connection.
 * - A whole `list_sessions` of those 64 jobs while helper processes hold 20 000 other sockets on
 *   loopback (10 000 connected pairs; they stop by themselves): what the tool's `execute` does (the
 *   runtime's listing and the result built from it; Pi's own dispatch around it is the same for every
 *   tool), 30 back to back (a listing reuses what the previous one read of a job nothing happened to,
 *   the scan's reuse, listening.ts) and 5 after a pause past that reuse (every job read again), with how many times
 *   the timed listings read the process table and the socket tables (none back to back once the jobs'
 *   sockets were looked at).
 */
import { pathToFileURL } from "node:url";
import type { Job } from "../../src/core/job/job.ts";
import { stampOf } from "../../src/core/job/job-reports.ts";
import { LISTING_SCAN, ListeningPorts } from "../../src/core/processes/listening.ts";
import { oneTableFor, processTable, processTableReads } from "../../src/core/processes/process-table.ts";
import { socketTableReads } from "../../src/core/processes/socket-tables.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { listResult } from "../../src/pi/results/list-result.ts";
import { waitFor } from "../helpers/processes.ts";
import { socketCrowd } from "../helpers/sockets.ts";

const FLOOD = "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 99";
/** A pattern of the kind the guidelines suggest, which the flood never matches. */
const PATTERN = "(?i)error|fatal|panic";
const JOBS = 64;
export const FLOOD_GOAL_RATIO = 1.05;
export const SCAN_GOAL_MS = 5;
/** Unrelated sockets on the machine during the listing row (SPEC §3c). */
const CROWD_SOCKETS = 20_000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Spawn to exit of one unread flood, in ms. */
async function unreadFlood(runtime: ExecRuntime, pattern: string | undefined): Promise<number> {
  const started = performance.now();
  const report = await runtime.exec(
    prepareExec({ cmd: FLOOD, yield_time_ms: 250, ...(pattern ? { wake_on_pattern: pattern } : {}) }, process.cwd(), process.env),
  );
  const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId);
  if (job) await new Promise<void>((resolve) => job.onExit(resolve));
  const ms = performance.now() - started;
  if (job) await runtime.interact({ jobId: job.id, window: { ms: 250 } }); // reported: the job is forgotten
  return ms;
}

export interface SpeakUpFigures {
  flood_unread_200MB_ms: { without_pattern: number; with_pattern: number; rounds: number };
  flood_ratio_with_over_without: number;
  listening_scan_ms: {
    jobs: number;
    processes: number;
    first: number;
    steady_median: number;
    steady_max: number;
    /** What the scan adds to a listing that read the process table already. */
    share_of_a_listing_median: number;
    /** Processes in the whole table (every one is read to find the jobs'). */
    table_processes: number;
  };
  listing_crowded_ms: {
    jobs: number;
    /** Sockets the helpers held open during the listings. */
    other_sockets: number;
    /** Back to back: each reuses what the previous read of the jobs (nothing happened to them). */
    median: number;
    max: number;
    /** The same listing before the helpers opened their sockets. */
    without_other_sockets_median: number;
    listings: number;
    /** Reads of /proc/net/tcp* by the timed listings' scans (the jobs' sockets known by then). */
    table_reads: number;
    /** Reads of the process table by the back-to-back listings. */
    process_table_reads: number;
    /** Each after a pause past the reuse bound: every job's processes read again (one process-table read each). */
    after_pause_median: number;
    after_pause_max: number;
    after_pause_listings: number;
  };
}

export async function speakUpBenchmark(rounds = 5): Promise<SpeakUpFigures> {
  const runtime = new ExecRuntime();
  try {
    const without: number[] = [];
    const withPattern: number[] = [];
    await unreadFlood(runtime, undefined); // warm-up
    for (let i = 0; i < rounds; i++) {
      // Alternating which goes first: a machine's phase favours neither.
      if (i % 2 === 0) {
        without.push(await unreadFlood(runtime, undefined));
        withPattern.push(await unreadFlood(runtime, PATTERN));
      } else {
        withPattern.push(await unreadFlood(runtime, PATTERN));
        without.push(await unreadFlood(runtime, undefined));
      }
    }
    const scan = await listeningScan(runtime);
    const crowded = await crowdedListing(runtime);
    return {
      flood_unread_200MB_ms: { without_pattern: round(median(without)), with_pattern: round(median(withPattern)), rounds },
      flood_ratio_with_over_without: round(median(withPattern) / median(without), 3),
      listening_scan_ms: scan,
      listing_crowded_ms: crowded,
    };
  } finally {
    await runtime.shutdown();
  }
}

export async function listeningScan(runtime: ExecRuntime): Promise<SpeakUpFigures["listening_scan_ms"]> {
  const ten = "for i in 1 2 3 4 5 6 7 8; do sleep 300 & done; sleep 300 & wait";
  // A dev server with a browser tab: listening, and holding both ends of one connection.
  const server =
    "python3 -c \"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); c=socket.create_connection(s.getsockname()); a=s.accept(); print('ready', flush=True); time.sleep(300)\"";
  // Eight calls at once, as in one message: one at a time, each call's 250 ms window made this 16 s.
  for (let i = 0; i < JOBS; i += 8) {
    const batch = Array.from({ length: Math.min(8, JOBS - i) }, (_, k) => (i + k === 0 ? server : ten));
    await Promise.all(batch.map((cmd) => runtime.exec(prepareExec({ cmd, yield_time_ms: 250 }, process.cwd(), process.env))));
  }
  const jobs = runtime.jobs().map((job: Job) => ({ jobId: job.id, leader: job.pid!, groups: job.groups(), stamp: stampOf(job) }));
  const leaders = new Set(jobs.map((job) => job.leader));
  const inJobs = () => (processTable() ?? []).filter((entry) => entry.sid !== undefined && leaders.has(entry.sid)).length;
  // Every job's processes started: the server alone, each other job a shell and nine `sleep`s.
  await waitFor(() => inJobs() >= 1 + (JOBS - 1) * 10, "every job's processes", 30_000);
  const ports = new ListeningPorts("none:");
  /** One scan with its own read of the process table. */
  const timed = () => {
    const started = performance.now();
    oneTableFor(() => ports.scan(jobs));
    return performance.now() - started;
  };
  /** The scan's own share of a listing, whose other work has read the process table already (one read serves the call). */
  const share = () =>
    oneTableFor(() => {
      processTable();
      const started = performance.now();
      ports.scan(jobs);
      return performance.now() - started;
    });
  const first = timed();
  const steady = Array.from({ length: 20 }, timed);
  const shares = Array.from({ length: 20 }, share);
  const processes = inJobs();
  return {
    jobs: jobs.length,
    processes,
    first: round(first),
    steady_median: round(median(steady)),
    steady_max: round(Math.max(...steady)),
    share_of_a_listing_median: round(median(shares)),
    table_processes: processTable()?.length ?? 0,
  };
}

/** `list_sessions` of the runtime's 64 jobs (the listing and its result), alone and while 20 000 other sockets are open on the machine. */
export async function crowdedListing(runtime: ExecRuntime): Promise<SpeakUpFigures["listing_crowded_ms"]> {
  const timedList = () => {
    const started = performance.now();
    listResult(runtime.list());
    return performance.now() - started;
  };
  const listings = () => Array.from({ length: 30 }, timedList);
  const alone = listings();
  const crowd = await socketCrowd(CROWD_SOCKETS / 2, 120);
  try {
    // Two looks a second apart; the sockets not listening are looked at again 2 s later, after the listings back to back.
    runtime.list();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    runtime.list();
    const reads = socketTableReads();
    const processReads = processTableReads();
    const times = listings();
    const tableReads = socketTableReads() - reads;
    const processTableReadsBackToBack = processTableReads() - processReads;
    const afterPause: number[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, LISTING_SCAN.reuseMs + 50));
      afterPause.push(timedList());
    }
    return {
      jobs: runtime.jobs().length,
      other_sockets: crowd.pairs * 2,
      median: round(median(times)),
      max: round(Math.max(...times)),
      without_other_sockets_median: round(median(alone)),
      listings: times.length,
      table_reads: tableReads,
      process_table_reads: processTableReadsBackToBack,
      after_pause_median: round(median(afterPause)),
      after_pause_max: round(Math.max(...afterPause)),
      after_pause_listings: afterPause.length,
    };
  } finally {
    crowd.stop();
  }
}

export function speakUpRows(figures: SpeakUpFigures): [string, string][] {
  const flood = figures.flood_unread_200MB_ms;
  const scan = figures.listening_scan_ms;
  const crowded = figures.listing_crowded_ms;
  return [
    [
      "unread 200 MB flood, wake_on_pattern (median ms)",
      `without ${flood.without_pattern} · with /${PATTERN}/ ${flood.with_pattern} → ${figures.flood_ratio_with_over_without}× (${flood.rounds} rounds)`,
    ],
    [
      `listening scan, ${scan.jobs} jobs, ${scan.processes} processes (ms)`,
      `first ${scan.first} · steady median ${scan.steady_median} (max ${scan.steady_max}), its read of the table of ${scan.table_processes} processes included · its share of a listing ${scan.share_of_a_listing_median}`,
    ],
    [
      `list_sessions, ${crowded.jobs} jobs, ${crowded.other_sockets} other sockets (ms)`,
      `back to back: median ${crowded.median} · max ${crowded.max} over ${crowded.listings} listings (without them: median ${crowded.without_other_sockets_median}) · socket tables read ${crowded.table_reads} times, the process table ${crowded.process_table_reads} · after a ${LISTING_SCAN.reuseMs / 1000} s pause (every job read): median ${crowded.after_pause_median} · max ${crowded.after_pause_max} over ${crowded.after_pause_listings}`,
    ],
  ];
}

export function speakUpGoals(figures: SpeakUpFigures): Record<string, boolean> {
  return {
    [`unread flood with a pattern ≤ ${FLOOD_GOAL_RATIO}× without`]: figures.flood_ratio_with_over_without <= FLOOD_GOAL_RATIO,
    [`listening scan of 64 jobs ≤ ${SCAN_GOAL_MS} ms (its share of a listing)`]:
      figures.listening_scan_ms.share_of_a_listing_median <= SCAN_GOAL_MS,
    [`list_sessions of 64 jobs with ${CROWD_SOCKETS} other sockets ≤ ${SCAN_GOAL_MS} ms (median)`]:
      figures.listing_crowded_ms.median <= SCAN_GOAL_MS && figures.listing_crowded_ms.other_sockets >= CROWD_SOCKETS * 0.95,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const figures = await speakUpBenchmark(Number(process.env.BENCH_ROUNDS) || 5);
  for (const [label, value] of speakUpRows(figures)) console.log(`${label}  ${value}`);
  for (const [goal, met] of Object.entries(speakUpGoals(figures))) console.log(`goal: ${goal}  ${met ? "met" : "MISSED"}`);
}
