import { spawnSync } from "node:child_process";
import { LSOF_COST_SHARE, LSOF_MIN_INTERVAL_MS } from "../shared/constants.ts";

/**
 * macOS's listening sockets: `lsof` lists them with their pids (listening.ts says whose they are).
 * `lsof` takes tens to hundreds of milliseconds there and blocks Pi's loop while it runs, and an
 * `until_listening` wait asks every 100 ms; so one probe serves the whole process, runs one `lsof` at
 * a time, and runs it again only once {@link LSOF_MIN_INTERVAL_MS} passed and the previous run's cost
 * is at most {@link LSOF_COST_SHARE} of the time since it ended. A scan in between answers from the
 * previous run's sockets.
 */

/** Runs `lsof` once: its `-Fpn` output, or undefined when it is missing or failed. */
export type LsofRunner = () => string | undefined;

const runLsof: LsofRunner = () => {
  const lsof = spawnSync("lsof", ["-nP", "-iTCP", "-sTCP:LISTEN", "-Fpn"], { encoding: "utf8", timeout: 5_000 });
  return lsof.error ? undefined : lsof.stdout;
};

export class LsofProbe {
  /** The latest run's listening addresses by pid (undefined: it failed), when it ended and what it cost (ms). */
  private last: { byPid: Map<number, string[]> | undefined; ended: number; costMs: number } | undefined;
  private running = false;
  /** How many times `lsof` was started (tests check the cadence). */
  runs = 0;
  /** How many runs have ended: a new one means a new answer. */
  generation = 0;

  constructor(
    private readonly run: LsofRunner = runLsof,
    /** Milliseconds on a monotonic clock: what a run cost is measured on it. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * The listening addresses by pid at `now`: a new run when one is due and none is under way, else
   * the last run's (a failed or missing `lsof` is asked again at the same cadence); undefined when
   * `lsof` gave no answer.
   */
  listening(now: number): ReadonlyMap<number, readonly string[]> | undefined {
    const last = this.last;
    const due = !last || now - last.ended >= Math.max(LSOF_MIN_INTERVAL_MS, last.costMs / LSOF_COST_SHARE);
    if (!due || this.running) return last?.byPid;
    this.running = true;
    const started = this.clock();
    let output: string | undefined;
    try {
      this.runs++;
      output = this.run();
    } finally {
      this.running = false;
    }
    const costMs = Math.max(0, this.clock() - started);
    this.generation++;
    this.last = { byPid: output === undefined ? undefined : parseLsof(output), ended: now + costMs, costMs };
    return this.last.byPid;
  }
}

/** `p<pid>` lines, each followed by its `n<address>` lines; `*:port` is every address. */
function parseLsof(output: string): Map<number, string[]> {
  const byPid = new Map<number, string[]>();
  let pid: number | undefined;
  for (const line of output.split("\n")) {
    if (line.startsWith("p")) pid = Number(line.slice(1));
    else if (line.startsWith("n") && pid !== undefined) {
      const addresses = byPid.get(pid) ?? [];
      addresses.push(line.slice(1).replace(/^\*:/, "0.0.0.0:"));
      byPid.set(pid, addresses);
    }
  }
  return byPid;
}

/** The one probe of this process (every runtime's scans share it). */
export const sharedLsof = new LsofProbe();
