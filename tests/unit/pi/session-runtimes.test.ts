import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import type { WakeBatch } from "../../../src/core/completion/wake-delivery.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { type HostState, RUNTIME_FORMAT, SessionRuntimes } from "../../../src/pi/session-runtimes.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";

const freshState = (): HostState => ({ runtimes: new WeakMap(), unstopped: new Set(), nextId: 1, handovers: new WeakMap() });
const request = (cmd: string) => prepareExec({ cmd, yield_time_ms: 250 }, process.cwd(), process.env);

describe("session runtimes", () => {
  it("separate sessions (SessionManager objects) never share a runtime", () => {
    const runtimes = new SessionRuntimes(freshState());
    const a = {};
    const b = {};
    assert.notEqual(runtimes.runtimeFor(a), runtimes.runtimeFor(b));
    assert.equal(runtimes.runtimeFor(a), runtimes.runtimeFor(a));
    assert.equal(runtimes.existing({}), undefined, "events never create one");
  });

  it("a parked runtime keeps its jobs and is adopted by the next instance, which gets the wakes sent while parked", async () => {
    const state = freshState();
    const manager = {};
    const before = new SessionRuntimes(state);
    const beforeWakes: WakeBatch[] = [];
    before.bind(manager, (batch) => beforeWakes.push(batch));
    const runtime = before.runtimeFor(manager);
    const sessionId = runningId(await runtime.exec(request("sleep 0.3"), { onExit: "wake" }));
    before.park(manager);
    assert.equal(before.existing(manager), undefined, "parked: not handed out");
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the exit while parked");
    await quietFor(400);
    assert.deepEqual(beforeWakes, [], "the old instance's API is never used again");
    const after = new SessionRuntimes(state);
    assert.deepEqual(after.adopt(manager), { adopted: runtime });
    const afterWakes: WakeBatch[] = [];
    after.bind(manager, (batch) => afterWakes.push(batch));
    assert.deepEqual(
      afterWakes.flatMap((batch) => batch.jobs.map((job) => job.jobId)),
      [sessionId],
      "delivered once after adoption",
    );
    assert.equal(after.runtimeFor(manager), runtime);
    await runtime.shutdown();
  });

  it("a runtime created in the middle of a run holds its wakes until the run settles; one adopted during a run too", async () => {
    const state = freshState();
    const manager = {};
    const before = new SessionRuntimes(state);
    const wakes: WakeBatch[] = [];
    before.bind(manager, (batch) => wakes.push(batch));
    before.setRunning(true);
    const runtime = before.runtimeFor(manager); // its first job comes in the run
    runningId(await runtime.exec(request("sleep 0.3"), { onExit: "wake" }));
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined && runtime.completions.waiting === 1, "the exit, held");
    await quietFor(400);
    assert.equal(wakes.length, 0, "held through the run");
    before.park(manager);
    const after = new SessionRuntimes(state);
    after.setRunning(true); // the reload came during the run
    after.bind(manager, (batch) => wakes.push(batch));
    assert.equal(after.runtimeFor(manager), runtime);
    assert.equal(wakes.length, 0, "still held after the adoption");
    after.setRunning(false);
    assert.equal(wakes.length, 1, "sent once, when the run settled");
    await runtime.shutdown();
  });

  it("a parked runtime is adopted, never replaced, when a call asks for the session's runtime first", async () => {
    const state = freshState();
    const manager = {};
    const before = new SessionRuntimes(state);
    const runtime = before.runtimeFor(manager);
    before.park(manager);
    assert.equal(new SessionRuntimes(state).runtimeFor(manager), runtime);
    await runtime.shutdown();
  });

  it("a runtime not adopted in time stops its jobs", async () => {
    const state = freshState();
    const manager = {};
    const runtimes = new SessionRuntimes(state, 200);
    const runtime = runtimes.runtimeFor(manager);
    await runtime.exec(request("sleep 300"));
    runtimes.park(manager);
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the jobs to be stopped", 5_000);
    assert.equal(runtime.jobs()[0]?.exit?.signal, "SIGTERM");
    assert.equal(new SessionRuntimes(state).adopt(manager), undefined);
  });

  it("refuses a parked runtime stamped by another build", async () => {
    const state = freshState();
    const manager = {};
    const old = new ExecRuntime();
    await old.exec(request("sleep 300"));
    state.runtimes.set(manager, { format: RUNTIME_FORMAT - 1, runtime: old, parked: { timer: setTimeout(() => {}, 0) } });
    const adoption = new SessionRuntimes(state).adopt(manager);
    assert.deepEqual(adoption, { refused: old, format: RUNTIME_FORMAT - 1 });
    assert.equal(state.runtimes.get(manager), undefined);
    await old.shutdown();
  });

  it("a session boundary stops the jobs and forgets the runtime; children it could not stop block new commands", async () => {
    const state = freshState();
    const manager = {};
    const runtimes = new SessionRuntimes(state);
    const runtime = runtimes.runtimeFor(manager);
    await runtime.exec(request("sleep 300"));
    const report = await runtimes.end(manager);
    assert.deepEqual(report?.survivors, []);
    assert.equal(runtimes.existing(manager), undefined);
    runtimes.assertNoUnstoppedChildren();
    const ownGroup = Number(execFileSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).trim());
    state.unstopped.add(ownGroup); // a group that is alive: this process's own
    assert.throws(
      () => runtimes.assertNoUnstoppedChildren(),
      /Processes of an earlier session could not be stopped .* no new command is started/,
    );
    state.unstopped.clear();
  });

  it("ids never repeat in one process: a session's next runtime, and another session's, continue the count", async () => {
    const state = freshState();
    const runtimes = new SessionRuntimes(state);
    const manager = {};
    const first = await runtimes.runtimeFor(manager).exec(request("sleep 300"));
    await runtimes.end(manager, { reason: "new" });
    const second = await runtimes.runtimeFor(manager).exec(request("sleep 300"));
    const otherSession = {};
    const other = await runtimes.runtimeFor(otherSession).exec(request("sleep 300"));
    assert.deepEqual([runningId(first), runningId(second), runningId(other)], [1, 2, 3]);
    await runtimes.end(manager, { reason: "quit" });
    await runtimes.end(otherSession, { reason: "quit" });
  });

  it("an in-memory fork (same SessionManager) hands the stopped jobs to the forked session: each old id answers once", async () => {
    const state = freshState();
    const runtimes = new SessionRuntimes(state);
    const manager = {};
    const started = await runtimes.runtimeFor(manager).exec(request("echo before; sleep 0.4; echo unread; exec sleep 300"));
    await waitFor(() => (runtimes.existing(manager)?.jobs()[0]?.outputBytesTotal ?? 0) >= 14, "the unread output");
    await runtimes.end(manager, { reason: "fork" });
    runtimes.forked(manager);
    const runtime = runtimes.runtimeFor(manager);
    const told = await runtime.interact({ jobId: started.job.jobId, window: { ms: 5_000 } });
    assert.deepEqual(told.job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "boundary" });
    assert.equal(told.output.text, "unread\n");
    await assert.rejects(runtime.interact({ jobId: started.job.jobId, window: { ms: 5_000 } }), /Unknown session_id/);
    await runtimes.end(manager, { reason: "quit" });
  });

  it("a persisted fork hands them to the session whose file the fork named; new and resume hand nothing over", async () => {
    const state = freshState();
    const runtimes = new SessionRuntimes(state);
    const session = (file: string) => ({ getSessionFile: () => file });
    for (const [reason, target, expected] of [
      ["fork", "/s/forked.jsonl", true],
      ["fork", "/s/elsewhere.jsonl", false],
      ["new", "/s/forked.jsonl", false],
      ["resume", "/s/forked.jsonl", false],
    ] as const) {
      const old = session("/s/old.jsonl");
      const sessionId = runningId(await runtimes.runtimeFor(old).exec(request("sleep 300")));
      await runtimes.end(old, { reason, targetSessionFile: target });
      const next = session("/s/forked.jsonl");
      if (reason === "fork") runtimes.forked(next);
      const runtime = runtimes.runtimeFor(next);
      if (expected)
        assert.equal(
          (await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } })).job.exit?.stoppedBy,
          "boundary",
          `${reason} → ${target}`,
        );
      else
        await assert.rejects(runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } }), /Unknown session_id/, `${reason} → ${target}`);
      await runtimes.end(next, { reason: "quit" });
    }
  });

  it("a runtime given up after /reload hands its jobs to the session's next runtime", async () => {
    const state = freshState();
    const manager = {};
    const runtimes = new SessionRuntimes(state, 200);
    const sessionId = runningId(await runtimes.runtimeFor(manager).exec(request("sleep 300")));
    runtimes.park(manager);
    await waitFor(() => state.handovers.has(manager), "the handover after the adoption deadline", 10_000);
    const runtime = new SessionRuntimes(state).runtimeFor(manager);
    assert.equal((await runtime.interact({ jobId: sessionId!, window: { ms: 5_000 } })).job.exit?.stoppedBy, "boundary");
    await runtime.shutdown();
  });
});
