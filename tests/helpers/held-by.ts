/**
 * What a Pi process holds at one moment, read from /proc: its descriptors (terminals and job logs
 * among them) and the processes under it (jobs, REPLs, idle warm shells; the watchdog left out), and
 * which processes still carry a marker of its jobs. The soak benchmarks and the reload test count
 * with these, so a leak means the same everywhere.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { descendantsOf, processesWithEnvironment, processTable } from "../../src/core/processes/process-table.ts";
import { JOB_MARKER_ENV, WARM_SHELL_NAME } from "../../src/core/shared/constants.ts";

/** Descriptors Pi holds for one idle warm shell: its stdin, stdout and stderr pipes and its control socket. */
export const FDS_PER_WARM_SHELL = 4;

/** What Pi holds at one moment. */
export interface HeldBy {
  /** Open descriptors, the idle warm shells' own left out (their number follows the calls run at once). */
  descriptors: number;
  terminals: number;
  /** Descriptors on files under the log directory given. */
  logs: number;
  /** Processes under Pi besides the watchdog and the warm shells. */
  jobProcesses: number;
  repls: number;
  warmShells: number;
}

function descriptorTargets(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return ""; // closed meanwhile
      }
    });
  } catch {
    return []; // Pi is gone
  }
}

/** Every descriptor target of `pid`, and the processes under it. */
export function heldBy(pid: number, logDir?: string): HeldBy {
  const targets = descriptorTargets(pid);
  let jobProcesses = 0;
  let repls = 0;
  let warmShells = 0;
  for (const child of descendantsOf(pid, processTable())) {
    let command = "";
    try {
      command = readFileSync(`/proc/${child}/cmdline`, "latin1");
    } catch {
      continue; // gone meanwhile
    }
    if (command.includes(WARM_SHELL_NAME)) warmShells++;
    else if (!command.includes("watchdog.sh")) {
      jobProcesses++;
      if (command.includes("python3")) repls++;
    }
  }
  return {
    descriptors: targets.length - FDS_PER_WARM_SHELL * warmShells,
    terminals: targets.filter((target) => target === "/dev/ptmx" || target.startsWith("/dev/pts/")).length,
    logs: logDir === undefined ? 0 : targets.filter((target) => target.startsWith(logDir)).length,
    jobProcesses,
    repls,
    warmShells,
  };
}

/** Processes whose environment carries the job marker of the runtime that logs to `logDir`. */
export function markedProcesses(logDir: string): number[] {
  const needle = Buffer.from(`PI_UNIFIED_EXEC_LOG_DIR=${logDir}\0`);
  return processesWithEnvironment(JOB_MARKER_ENV, "").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`).includes(needle);
    } catch {
      return false;
    }
  });
}
