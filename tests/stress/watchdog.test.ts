/**
 * Host death beside CPU burners: a separate Node process hosting a runtime with pipe, PTY,
 * TERM-ignoring and backgrounded jobs is SIGKILLed eight times over, and the watchdog ends every job
 * within 3 s each time. (`tests/unit/core/watchdog.test.ts` holds the watchdog's rules; the
 * SIGKILLed real Pi is in `tests/e2e/host-death.test.ts`.)
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { descendantsOf } from "../../src/core/processes/process-table.ts";
import { REPO_ROOT } from "../helpers/hosts.ts";
import { StartedJobs } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { startNodeHost } from "../helpers/node-host.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { logParents } from "../helpers/runtime.ts";

/** The jobs' groups, killed after the file's tests if a run failed. */
const strays = new StartedJobs();
const logParent = logParents("piue-watchdog-");

/** A separate Node process hosting a runtime with the given jobs; resolves once they run, with their pids. */
async function startHost(
  parent: string,
  jobs: { cmd: string; tty?: boolean }[],
): Promise<{ host: ChildProcess; pids: number[]; watchdog: number }> {
  const program = `
    import { LogDirectory } from ${JSON.stringify(join(REPO_ROOT, "src/core/log/job-log.ts"))};
    import { logConfig } from ${JSON.stringify(join(REPO_ROOT, "src/core/log/job-log.ts"))};
    import { prepareExec } from ${JSON.stringify(join(REPO_ROOT, "src/core/request/request.ts"))};
    import { ExecRuntime } from ${JSON.stringify(join(REPO_ROOT, "src/core/runtime.ts"))};
    const runtime = new ExecRuntime({ logs: new LogDirectory({ ...logConfig(), parent: ${JSON.stringify(parent)} }) });
    for (const job of ${JSON.stringify(jobs)}) {
      // Until the job has printed its pid (a loaded machine starts a PTY job slowly), not a fixed window.
      const report = await runtime.exec(prepareExec({ ...job, yield_time_ms: 20_000, until_pattern: "^[0-9]+$" }, process.cwd(), process.env));
      console.log(report.output.text.replace(/\\r/g, "").trim());
    }
    console.log("watchdog " + runtime.orphans.watchdog.pid);
    setInterval(() => {}, 1_000);
  `;
  const { host, output } = startNodeHost(program);
  try {
    await waitFor(() => /^watchdog \d+$/m.test(output()), "the host to start its jobs", 30_000);
  } catch (error) {
    // A host that never got there must not keep this file's process (and the suite) alive.
    host.kill("SIGKILL");
    throw new Error(`${(error as Error).message}; the host printed ${JSON.stringify(output())}`);
  }
  const watchdog = Number(/^watchdog (\d+)$/m.exec(output())![1]);
  return { host, pids: pidsIn(output()), watchdog };
}

describe("host death beside CPU burners", { skip: process.platform === "win32" && "Windows has no watchdog" }, () => {
  it(
    "when the host process is SIGKILLed, pipe, PTY, TERM-ignoring and backgrounded jobs (Linux: also another group of a PTY's session) all end within 3 s (8 runs, CPU burners beside)",
    { skip: SKIP_WITHOUT_PTY, timeout: 300_000 },
    async () => {
      // Linux: a job-control shell on a PTY runs a background job in another group of its session;
      // nohup keeps the terminal's hangup from ending it, so only the watchdog's session scan can.
      const sessionJob =
        process.platform === "linux" ? [{ cmd: "set -m; nohup sleep 300 >/dev/null 2>&1 & echo $!; wait", tty: true }] : [];
      const stopBurners = startBurners(2);
      try {
        for (let run = 0; run < 8; run++) {
          const parent = logParent();
          const { host, pids, watchdog } = await startHost(parent, [
            { cmd: "echo $$; sleep 300" },
            { cmd: "echo $$; sleep 300", tty: true },
            { cmd: "echo $$; trap '' TERM; sleep 300" },
            { cmd: "sleep 300 & echo $!; wait" },
            { cmd: "sleep 300 & echo $!; exit 0" },
            ...sessionJob,
          ]);
          try {
            assert.equal(pids.length, 5 + sessionJob.length, `run ${run}: ${pids}`);
            const everyone = [...pids, ...pids.flatMap((pid) => descendantsOf(pid))];
            assert.ok(everyone.every(processAlive), `run ${run}: the jobs run`);
            for (const pid of pids) strays.group(pid);
            host.kill("SIGKILL");
            // 3 s: the TERM-ignoring job's 1 s of grace, and a few forks and process scans of the
            // watchdog's (1.3-1.8 s measured with four burners and a load of 13-15 on two cores).
            const killedAt = performance.now();
            await waitFor(() => everyone.every((pid) => !processAlive(pid)), `run ${run}: every job process to end`, 3_000);
            assert.ok(performance.now() - killedAt < 3_000);
            await waitFor(() => !processAlive(watchdog), `run ${run}: the watchdog to exit`, 5_000);
          } finally {
            host.kill("SIGKILL"); // a failed run must not leave its host holding the suite open
          }
        }
      } finally {
        stopBurners();
      }
    },
  );
});
