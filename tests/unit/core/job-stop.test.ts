/**
 * Stopping a job (job-stop.ts through `Job.terminate`): SIGTERM with and without escalation, SIGKILL
 * without grace, a descendant that escaped with setsid, and the job's own hard deadline.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ESCAPE_GROUP, StartedJobs, untilExit } from "../../helpers/jobs.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";

const started = new StartedJobs();
const start = (command: string, options: { timeoutMs?: number } = {}) => started.start(command, options);

describe("stopping a job", () => {
  it("SIGTERM ends a plain job without escalation; cleanup is confirmed", async () => {
    const job = start("sleep 300");
    await waitFor(() => job.pid !== undefined, "spawn");
    const stop = await job.terminate("SIGTERM", "killed");
    assert.deepEqual(stop, { signal: "SIGTERM", escalated: false, cleanup: "confirmed", survivors: [] });
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" });
  });

  it("escalates to SIGKILL after 2 s when the job ignores SIGTERM", async () => {
    const job = start("trap '' TERM; echo ready; sleep 300 & wait");
    await waitFor(() => job.outputBytesTotal > 0, "ready");
    const t0 = performance.now();
    const stop = await job.terminate("SIGTERM", "killed");
    const took = performance.now() - t0;
    assert.equal(stop.escalated, true);
    assert.equal(stop.cleanup, "confirmed");
    assert.equal(job.exit?.signal, "SIGKILL");
    assert.ok(took >= 1_900 && took < 4_000, `took ${took} ms`);
  });

  it("SIGKILL skips the grace", async () => {
    const job = start("trap '' TERM; sleep 300");
    await waitFor(() => job.pid !== undefined, "spawn");
    const t0 = performance.now();
    const stop = await job.terminate("SIGKILL", "killed");
    assert.equal(stop.escalated, false);
    assert.ok(performance.now() - t0 < 1_500);
    assert.equal(job.exit?.exitCode, 137);
  });

  it("a grandchild that escaped with setsid makes the cleanup unconfirmed, never confirmed", async () => {
    // The grandchild prints its pid once it has left the group (setsid), then becomes `sleep`.
    const job = start(`${ESCAPE_GROUP} & sleep 300`);
    await waitFor(() => job.outputBytesTotal > 0, "the grandchild's pid");
    const [grandchild] = pidsIn(job.takeOutput().text);
    assert.ok(grandchild);
    started.pid(grandchild);
    const stop = await job.terminate("SIGTERM", "killed");
    assert.equal(stop.cleanup, "unconfirmed");
    assert.deepEqual(stop.survivors, [grandchild]);
    assert.ok(processAlive(grandchild), "the escaped process is out of the group's reach");
  });

  it("stops a job at its hard deadline, whether or not anyone waits", async () => {
    const job = start("echo started; sleep 300", { timeoutMs: 400 });
    const t0 = performance.now();
    await untilExit(job);
    assert.ok(performance.now() - t0 < 3_000);
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" });
  });

  it("a job that ends before its deadline is not marked as stopped", async () => {
    const job = start("true", { timeoutMs: 1_000 });
    await untilExit(job);
    assert.deepEqual(job.exit, { exitCode: 0, signal: null });
  });
});
