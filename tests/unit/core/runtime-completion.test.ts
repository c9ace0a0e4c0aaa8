import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { prepareExec } from "../../../src/core/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import type { WakeBatch } from "../../../src/core/wakes.ts";
import { waitFor } from "../../helpers/processes.ts";

const request = (cmd: string, yieldMs = 250) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);

function runtimeWithWakes() {
  const runtime = new ExecRuntime();
  const batches: WakeBatch[] = [];
  runtime.completion.setSender((batch) => batches.push(batch));
  const woken = () => batches.flatMap((batch) => batch.jobs.map((job) => job.sessionId));
  return { runtime, batches, woken };
}

describe("runtime and completion wakes", () => {
  it("arms only when exec_command hands back a live session_id", async () => {
    const { runtime } = runtimeWithWakes();
    const quick = await runtime.exec(request("true"), { onExit: "wake" });
    assert.equal(quick.wakeArmed, undefined);
    const slow = await runtime.exec(request("sleep 300"), { onExit: "wake" });
    assert.equal(slow.wakeArmed, true);
    assert.equal(runtime.list()[0]?.wakeArmed, true);
    await runtime.shutdown();
  });

  it("an unobserved exit wakes once, with bounded metadata; the job stays readable and reading it wakes nothing", async () => {
    const { runtime, batches, woken } = runtimeWithWakes();
    const { sessionId } = await runtime.exec(request("sleep 0.4; echo done; exit 2"), { onExit: "wake" });
    await waitFor(() => batches.length > 0, "the wake");
    assert.deepEqual(woken(), [sessionId]);
    const job = batches[0]!.jobs[0]!;
    assert.equal(job.exitCode, 2);
    assert.equal(job.command, "sleep 0.4; echo done; exit 2");
    assert.ok(!JSON.stringify(batches).includes("done\\n"), "never the output");
    const read = await runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "read" });
    assert.equal(read.exit?.exitCode, 2);
    assert.equal(read.text, "done\n");
    assert.equal(read.wakeConsumed, undefined);
    runtime.completion.finalize("read", false);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(batches.length, 1);
    await runtime.shutdown();
  });

  it("a poll that returns the exit consumes the wake when finalized", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const { sessionId } = await runtime.exec(request("sleep 0.3"), { onExit: "wake" });
    const read = await runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "poll" });
    assert.equal(read.exit?.exitCode, 0);
    assert.equal(read.wakeConsumed, true);
    runtime.completion.finalize("poll", false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(batches, []);
    await runtime.shutdown();
  });

  it("a poll whose result Pi finalizes as an error leaves the wake to fire", async () => {
    const { runtime, woken } = runtimeWithWakes();
    const { sessionId } = await runtime.exec(request("sleep 0.3"), { onExit: "wake" });
    await runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "poll" });
    runtime.completion.finalize("poll", true);
    await waitFor(() => woken().length === 1, "the wake");
  });

  it("a cancelled wait reads nothing, keeps the job, and leaves the wake eligible", async () => {
    const { runtime, woken } = runtimeWithWakes();
    const dir = mkdtempSync(join(tmpdir(), "piue-cancel-"));
    const { sessionId } = await runtime.exec(request(`while [ ! -e ${dir}/go ]; do sleep 0.02; done; echo late; sleep 0.3`), {
      onExit: "wake",
    });
    const controller = new AbortController();
    const waiting = runtime.interact(sessionId!, {}, { ms: 10_000 }, { callId: "esc", signal: controller.signal });
    writeFileSync(join(dir, "go"), "");
    await waitFor(() => runtime.jobs()[0]!.outputBytesTotal > 0, "the output");
    controller.abort();
    const cancelled = await waiting;
    assert.equal(cancelled.cancelled, true);
    assert.equal(cancelled.sessionId, sessionId);
    assert.equal(cancelled.text, "", "a cancelled call drains nothing");
    runtime.completion.finalize("esc", false);
    await waitFor(() => woken().length === 1, "the wake after the exit");
    const drained = await runtime.interact(sessionId!, {}, { ms: 1_000 });
    assert.equal(drained.text, "late\n", "the output waited for the next read");
    await runtime.shutdown();
  });

  it("kill_session suppresses the wake; listing an exit consumes it", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const killed = await runtime.exec(request("sleep 300"), { onExit: "wake" });
    const listed = await runtime.exec(request("sleep 0.3"), { onExit: "wake" });
    await runtime.kill(killed.sessionId!, "SIGTERM", "kill-call");
    await waitFor(() => runtime.jobs().some((job) => job.id === listed.sessionId && job.exit), "the exit");
    runtime.list("list-call");
    runtime.completion.finalize("list-call", false);
    runtime.completion.finalize("kill-call", false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(batches, []);
    await runtime.shutdown();
  });

  it("jobs stopped by their deadline still wake, with the reason", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const timed = prepareExec({ cmd: "sleep 300", yield_time_ms: 250, timeout_s: 1 }, process.cwd(), process.env);
    await runtime.exec(timed, { onExit: "wake" });
    await waitFor(() => batches.length > 0, "the wake", 10_000);
    assert.match(batches[0]!.jobs[0]!.reason ?? "", /timeout_s deadline/);
    await runtime.shutdown();
  });

  it("nested reads of a finished job replay its result until the enclosing call is finalized", async () => {
    const { runtime } = runtimeWithWakes();
    const { sessionId } = await runtime.exec(request("sleep 0.4; exit 3"));
    const first = await runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "n1", replayScope: "outer" });
    assert.equal(first.exit?.exitCode, 3);
    const again = await runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "n2", replayScope: "outer" });
    assert.equal(again.exit?.exitCode, 3);
    await assert.rejects(runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "other" }), /Unknown session_id/);
    runtime.endScope("outer");
    await assert.rejects(runtime.interact(sessionId!, {}, { ms: 5_000 }, { callId: "n3", replayScope: "outer" }), /Unknown session_id/);
    await runtime.shutdown();
  });

  it("set_on_exit: found false for unknown ids", async () => {
    const { runtime } = runtimeWithWakes();
    assert.deepEqual(runtime.setOnExit(42, "none"), { found: false });
    const { sessionId } = await runtime.exec(request("sleep 300"));
    assert.deepEqual(runtime.setOnExit(sessionId!, "wake"), { found: true, status: "armed" });
    assert.deepEqual(runtime.setOnExit(sessionId!, "none"), { found: true, status: "disarmed" });
    await runtime.shutdown();
  });
});
