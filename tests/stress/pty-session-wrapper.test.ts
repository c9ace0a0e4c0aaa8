/**
 * The wrapper that leads a PTY job's session (fd-hygiene.ts, `HOLDER`) beside two CPU burners, 20
 * runs: a Ctrl-C reads as SIGINT and `exit 130` by hand as code 130 (told apart by where bash ends the
 * wrapper), kill_session's SIGTERM as SIGTERM, a TERM trap's own `exit 7` at a shutdown as 7. Once,
 * without burners: `tests/unit/core/pty-session-wrapper.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { runningId } from "../helpers/reports.ts";

const RUNS = 20;
const LINUX_PTY = process.platform !== "linux" ? "the wrapper runs on Linux only" : SKIP_WITHOUT_PTY;
const exec = (cmd: string, ready = true) =>
  prepareExec({ cmd, tty: true, yield_time_ms: 10_000, ...(ready ? { until_pattern: "^ready" } : {}) }, process.cwd(), process.env);

describe("a PTY job's exit read through the session's wrapper, beside two burners", { skip: LINUX_PTY }, () => {
  it("Ctrl-C reads as SIGINT, `exit 130` as 130, kill_session's SIGTERM as SIGTERM, a shutdown's TERM trap as its own 7, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < RUNS; run++) {
        const runtime = new ExecRuntime();
        try {
          const interrupted = runningId(await runtime.exec(exec("echo ready; sleep 30")))!;
          const ctrlC = await runtime.interact(
            prepareWrite({ session_id: interrupted, chars: "\\x03", yield_time_ms: 10_000 }, process.env),
          );
          assert.deepEqual([ctrlC.job.exit?.exitCode, ctrlC.job.exit?.signal], [130, "SIGINT"], `run ${run}: Ctrl-C`);
          const byHand = await runtime.exec(exec("exit 130", false));
          assert.deepEqual([byHand.job.exit?.exitCode, byHand.job.exit?.signal], [130, null], `run ${run}: exit 130`);
          const killed = await runtime.kill(runningId(await runtime.exec(exec("echo ready; exec sleep 30")))!, "SIGTERM");
          assert.equal(killed.job.exit?.signal, "SIGTERM", `run ${run}: kill_session`);
          const trapped = runningId(await runtime.exec(exec("trap 'exit 7' TERM; echo ready; sleep 30 & wait")))!;
          const job = runtime.jobs().find((candidate) => candidate.id === trapped)!;
          await runtime.shutdown();
          // The exit's report comes from node-pty's waiter thread, maybe after the groups are seen empty.
          await waitFor(() => job.exit !== undefined, `run ${run}: the exit after the shutdown`);
          assert.deepEqual([job.exit?.exitCode, job.exit?.signal], [7, null], `run ${run}: shutdown`);
        } finally {
          await runtime.shutdown();
        }
      }
    } finally {
      stop();
    }
  });
});
