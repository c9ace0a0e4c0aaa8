import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import type { WakeBatch } from "../../../src/core/completion.ts";
import { prepareExec } from "../../../src/core/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { type HostState, RUNTIME_FORMAT } from "../../../src/pi/host-state.ts";
import { SessionRuntimes } from "../../../src/pi/session-runtimes.ts";
import { waitFor } from "../../helpers/processes.ts";

const freshState = (): HostState => ({ runtimes: new WeakMap(), unstopped: new Set() });
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
    const { sessionId } = await runtime.exec(request("sleep 0.3"), { onExit: "wake" });
    before.park(manager);
    assert.equal(before.existing(manager), undefined, "parked: not handed out");
    await waitFor(() => runtime.jobs()[0]?.exit !== undefined, "the exit while parked");
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(beforeWakes, [], "the old instance's API is never used again");
    const after = new SessionRuntimes(state);
    assert.deepEqual(after.adopt(manager), { adopted: runtime });
    const afterWakes: WakeBatch[] = [];
    after.bind(manager, (batch) => afterWakes.push(batch));
    assert.deepEqual(afterWakes.flatMap((batch) => batch.jobs.map((job) => job.sessionId)), [sessionId], "delivered once after adoption");
    assert.equal(after.runtimeFor(manager), runtime);
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
    assert.throws(() => runtimes.assertNoUnstoppedChildren(), /Processes of an earlier session could not be stopped .* no new command is started/);
    state.unstopped.clear();
  });
});
