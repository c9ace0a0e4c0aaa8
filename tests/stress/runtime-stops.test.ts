/**
 * Stops the model did not ask for, beside CPU burners, 15 runs each: a user kill is told once with
 * every unread byte, and the first listing of an exited job whose group lives on says `cleanup:
 * unconfirmed`. Once each, without burners: `tests/unit/core/runtime.stops.test.ts`.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { UnknownJobError } from "../../src/core/shared/errors.ts";
import { StartedJobs } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { pidsIn, waitFor } from "../helpers/processes.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimeWithWakes as recordingWakes } from "../helpers/runtime.ts";

const request = (cmd: string, yieldMs = 300) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);
const poll = { ms: 5_000 };
const runtimes: ExecRuntime[] = [];
const leftovers = new StartedJobs();

/** A runtime recording its wakes, shut down after the file's tests. */
function runtimeWithWakes() {
  const made = recordingWakes();
  runtimes.push(made.runtime);
  return made;
}

after(async () => {
  for (const runtime of runtimes) await runtime.shutdown();
});

describe("under load (CPU burners beside), many times over", () => {
  const RUNS = 15;

  it("a user kill is told once, with every unread byte, every time", async () => {
    const stopBurners = startBurners();
    try {
      const { runtime } = runtimeWithWakes();
      const expected = `${Array.from({ length: 2_000 }, (_, i) => i + 1).join("\n")}\n`;
      for (let run = 0; run < RUNS; run++) {
        // The numbers come only after the first result, when the test (not a model call) says go.
        const report = await runtime.exec(request("echo start; read go; seq 1 2000; exec sleep 300", 250), { onExit: "wake" });
        assert.ok(runningId(report), `run ${run}: ${report.output.text}`);
        const job = runtime.jobs().find((candidate) => candidate.id === runningId(report))!;
        await job.send({ kind: "bytes", bytes: Buffer.from("go\n") }, performance.now() + 20_000);
        await waitFor(() => job.outputBytesTotal >= "start\n".length + expected.length, `run ${run}: the numbers`, 20_000);
        await runtime.kill(report.job.jobId, "SIGTERM", undefined, "user");
        const told = await runtime.interact({ jobId: report.job.jobId, window: poll }, { callId: `load-${run}` });
        assert.equal(told.job.exit?.stoppedBy, "user", `run ${run}`);
        // Under load "start" may land after the first result's window; the two reads hold it once.
        const shown = `${told.output.text.length} bytes ending ${JSON.stringify(told.output.text.slice(-12))}`;
        assert.ok(report.output.text + told.output.text === `start\n${expected}`, `run ${run}: the unread output, whole (got ${shown})`);
        await assert.rejects(runtime.interact({ jobId: report.job.jobId, window: poll }), UnknownJobError, `run ${run}`);
      }
    } finally {
      stopBurners();
    }
  });

  it("the first listing of an exited job whose group lives on says cleanup: unconfirmed, every time", async () => {
    const stopBurners = startBurners();
    try {
      const { runtime } = runtimeWithWakes();
      for (let run = 0; run < RUNS; run++) {
        const report = await runtime.exec(request("set -m; sleep 0.3; sleep 30 & echo $!; exit 0", 250));
        assert.ok(runningId(report), `run ${run}: ${report.output.text}`);
        const job = runtime.jobs().find((candidate) => candidate.id === runningId(report))!;
        await waitFor(() => job.exit !== undefined, `run ${run}: the leader's exit`, 20_000);
        const [sleeper] = pidsIn(job.takeOutput().text);
        if (sleeper) leftovers.pid(sleeper);
        assert.deepEqual(
          runtime.list().map((entry) => [entry.jobId, entry.cleanup]),
          [[runningId(report), "unconfirmed"]],
          `run ${run}`,
        );
        assert.equal((await runtime.kill(report.job.jobId, "SIGKILL")).termination.cleanup, "confirmed", `run ${run}`);
      }
    } finally {
      stopBurners();
    }
  });
});
