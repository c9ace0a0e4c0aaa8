/**
 * Exactly-once completion (CompletionLedger). Directly: a call inside another tool's call (Pi's
 * `parentToolCallId`) hands what it observed to the outermost call, which commits it when Pi
 * finalizes it and gets a receipt naming the exits (worded by the Pi layer's `receiptText`). Through
 * a runtime with real jobs: arming, wakes, polls, cancels, kills and listings, nested replays.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CompletionLedger } from "../../../src/core/completion/completion-ledger.ts";
import type { ObservedExit } from "../../../src/core/job/attached-call.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { receiptText } from "../../../src/pi/receipt.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes, wakesSettled } from "../../helpers/runtime.ts";

const request = (cmd: string, yieldMs = 250) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);

const exitOf = (jobId: number): ObservedExit => ({ kind: "write", jobId, exitCode: 0, signal: null });
/** The receipt's text for the outermost call, or undefined when it has none. */
const receiptFor = (ledger: CompletionLedger<unknown>, callId: string) => {
  const receipt = ledger.receipt(callId);
  return receipt && receiptText(receipt);
};

describe("completion ledger: nested calls", () => {
  it("finds the outermost call through any depth of nesting", () => {
    const ledger = new CompletionLedger<unknown>();
    ledger.callStarted("outer");
    ledger.callStarted("middle", "outer");
    ledger.callStarted("inner", "middle");
    ledger.observed("inner", exitOf(7));
    ledger.callEnded("inner", false);
    assert.equal(receiptFor(ledger, "middle"), undefined, "a nested call gets no receipt");
    assert.match(receiptFor(ledger, "outer") ?? "", /- session 7: /, "the exit went to the outermost call, past the middle one");
  });

  it("moves nested observations to the outermost call, which commits them at its end", () => {
    const ledger = new CompletionLedger<unknown>();
    ledger.arm(7);
    ledger.callStarted("outer");
    ledger.callStarted("inner", "outer");
    ledger.observed("inner", exitOf(7));
    ledger.callEnded("inner", false);
    assert.equal(ledger.exitLevel(7), "wake", "not consumed before the outer call ends");
    assert.match(
      receiptFor(ledger, "outer") ?? "",
      /1 job exit reported inside this call[\s\S]*- session 7: exit_code 0, seen by write_stdin/,
    );
    ledger.callEnded("outer", false);
    assert.equal(ledger.exitLevel(7), undefined);
    assert.equal(receiptFor(ledger, "outer"), undefined);
  });

  it("keeps at most 64 exits per receipt and names at most 16, counting the rest", () => {
    const ledger = new CompletionLedger<unknown>();
    ledger.callStarted("outer");
    for (let id = 1; id <= 70; id++) {
      ledger.callStarted(`inner-${id}`, "outer");
      ledger.observed(`inner-${id}`, exitOf(id));
      ledger.callEnded(`inner-${id}`, false);
    }
    const receipt = receiptFor(ledger, "outer")!;
    assert.match(receipt, /^\[unified-exec receipt: 70 job exits reported inside this call/);
    assert.equal(receipt.split("\n").filter((line) => line.startsWith("- session")).length, 16);
    assert.match(receipt, /- session 70:/, "the latest are named");
    assert.match(receipt, /- and 54 more \(list_sessions shows the jobs still known\)$/);
  });
});

describe("completion ledger through a runtime, with real jobs", () => {
  it("arms only when exec_command hands back a live session_id", async () => {
    const { runtime } = runtimeWithWakes();
    // A window the exit ends: on a busy machine `true` can take longer than 250 ms to start and end.
    const quick = await runtime.exec(request("true", 10_000), { onExit: "wake" });
    assert.notEqual(quick.wake, "armed");
    const slow = await runtime.exec(request("sleep 300"), { onExit: "wake" });
    assert.equal(slow.wake, "armed");
    assert.equal(runtime.list()[0]?.wakeArmed, true);
    await runtime.shutdown();
  });

  it("an unobserved exit wakes once, with bounded metadata; the job stays readable and reading it wakes nothing", async () => {
    const { runtime, batches, woken } = runtimeWithWakes();
    const sessionId = runningId(await runtime.exec(request("sleep 0.4; echo done; exit 2"), { onExit: "wake" }));
    await waitFor(() => batches.length > 0, "the wake");
    assert.deepEqual(woken(), [sessionId]);
    const job = batches[0]!.jobs[0]!;
    assert.equal(job.exitCode, 2);
    assert.equal(job.command, "sleep 0.4; echo done; exit 2");
    assert.ok(!JSON.stringify(batches).includes("done\\n"), "never the output");
    const read = await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, { callId: "read" });
    assert.equal(read.job.exit?.exitCode, 2);
    assert.equal(read.output.text, "done\n");
    assert.notEqual(read.wake, "consumed");
    runtime.completions.callEnded("read", false);
    await wakesSettled(runtime);
    assert.equal(batches.length, 1);
    await runtime.shutdown();
  });

  it("a poll that returns the exit consumes the wake when finalized", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const sessionId = runningId(await runtime.exec(request("sleep 0.3"), { onExit: "wake" }));
    const read = await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, { callId: "poll" });
    assert.equal(read.job.exit?.exitCode, 0);
    assert.equal(read.wake, "consumed");
    runtime.completions.callEnded("poll", false);
    await wakesSettled(runtime);
    assert.deepEqual(batches, []);
    await runtime.shutdown();
  });

  it("a poll whose result Pi finalizes as an error leaves the wake to fire", async () => {
    const { runtime, woken } = runtimeWithWakes();
    const sessionId = runningId(await runtime.exec(request("sleep 0.3"), { onExit: "wake" }));
    await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, { callId: "poll" });
    runtime.completions.callEnded("poll", true);
    await waitFor(() => woken().length === 1, "the wake");
  });

  it("a cancelled wait reads nothing, keeps the job, and leaves the wake eligible", async () => {
    const { runtime, woken } = runtimeWithWakes();
    const dir = mkdtempSync(join(tmpdir(), "piue-cancel-"));
    const sessionId = runningId(
      await runtime.exec(request(`while [ ! -e ${dir}/go ]; do sleep 0.02; done; echo late; sleep 0.3`), {
        onExit: "wake",
      }),
    );
    const controller = new AbortController();
    const waiting = runtime.interact({ jobId: sessionId!, window: { ms: 10_000 } }, { callId: "esc", signal: controller.signal });
    writeFileSync(join(dir, "go"), "");
    await waitFor(() => runtime.jobs()[0]!.outputBytesTotal > 0, "the output");
    controller.abort();
    const cancelled = await waiting;
    assert.equal(cancelled.cancelled, true);
    assert.equal(runningId(cancelled), sessionId);
    assert.equal(cancelled.output.text, "", "a cancelled call drains nothing");
    runtime.completions.callEnded("esc", false);
    await waitFor(() => woken().length === 1, "the wake after the exit");
    const drained = await runtime.interact({ jobId: sessionId!, window: { ms: 1_000 } });
    assert.equal(drained.output.text, "late\n", "the output waited for the next read");
    await runtime.shutdown();
  });

  it("kill_session suppresses the wake; listing an exit consumes it", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const killed = await runtime.exec(request("sleep 300"), { onExit: "wake" });
    const listed = await runtime.exec(request("sleep 0.3"), { onExit: "wake" });
    await runtime.kill(killed.job.jobId, "SIGTERM", "kill-call");
    await waitFor(() => runtime.jobs().some((job) => job.id === runningId(listed) && job.exit), "the exit");
    runtime.list("list-call");
    runtime.completions.callEnded("list-call", false);
    runtime.completions.callEnded("kill-call", false);
    await wakesSettled(runtime);
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
    const sessionId = runningId(await runtime.exec(request("sleep 0.4; exit 3")));
    // Calls n1..n3 run inside the outermost call "outer" (Pi's tool_execution_start names the parent).
    const nested = (callId: string) => {
      runtime.completions.callStarted(callId, "outer");
      return { callId };
    };
    const first = await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, nested("n1"));
    assert.equal(first.job.exit?.exitCode, 3);
    const again = await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, nested("n2"));
    assert.equal(again.job.exit?.exitCode, 3);
    await assert.rejects(runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, { callId: "other" }), /Unknown session_id/);
    runtime.completions.callEnded("outer", false);
    await assert.rejects(runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }, nested("n3")), /Unknown session_id/);
    await runtime.shutdown();
  });

  it("set_on_exit: found false for unknown ids", async () => {
    const { runtime } = runtimeWithWakes();
    assert.deepEqual(runtime.setOnExit(42, { onExit: "none" }), { found: false });
    const sessionId = runningId(await runtime.exec(request("sleep 300")));
    assert.deepEqual(runtime.setOnExit(sessionId!, { onExit: "wake" }), { found: true, onExit: "armed" });
    assert.deepEqual(runtime.setOnExit(sessionId!, { onExit: "none" }), { found: true, onExit: "disarmed" });
    await runtime.shutdown();
  });
});
