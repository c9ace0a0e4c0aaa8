import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Job } from "../../../src/core/job/job.ts";
import { JobRegistry } from "../../../src/core/job/registry.ts";
import { normalizeSignal } from "../../../src/core/processes/process-group.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

/** Stand-ins with only what the registry reads. */
const running = (id: number) => ({ id, exit: undefined, attached: undefined }) as unknown as Job;
const exited = (id: number, attached?: string) => ({ id, exit: { exitCode: 0, signal: null }, attached }) as unknown as Job;

describe("JobRegistry", () => {
  it("allocates ids from 1 and never reuses one", () => {
    const registry = new JobRegistry();
    assert.deepEqual([registry.allocateId(), registry.allocateId(), registry.allocateId()], [1, 2, 3]);
    registry.add(running(2));
    registry.remove(2);
    assert.equal(registry.allocateId(), 4);
  });

  it("makes only published jobs addressable", () => {
    const registry = new JobRegistry();
    const job = running(registry.allocateId());
    registry.add(job);
    assert.equal(registry.get(job.id), undefined, "admitted, not yet published");
    assert.equal(registry.size, 1, "but it holds a slot");
    registry.publish(job.id);
    assert.equal(registry.get(job.id), job);
    assert.deepEqual(registry.jobs(), [job]);
    registry.remove(job.id);
    assert.equal(registry.get(job.id), undefined);
    assert.equal(registry.size, 0);
  });

  it("evicts completed records oldest first to admit a new job, never a live or attached one", () => {
    const registry = new JobRegistry(4);
    for (const job of [running(1), exited(2, "write_stdin"), exited(3), exited(4)]) registry.add(job);
    assert.deepEqual(
      registry.makeRoom().map((job) => job.id),
      [3],
    );
    registry.add(running(5));
    assert.deepEqual(
      registry.makeRoom().map((job) => job.id),
      [4],
    );
  });

  it("refuses, before anything is spawned, when every slot holds a live job", () => {
    const registry = new JobRegistry(2);
    registry.add(running(1));
    registry.add(exited(2, "exec_command"));
    assert.throws(
      () => registry.makeRoom(),
      (error: Error) => {
        assert.ok(error instanceof ExecRequestError);
        assert.match(
          error.message,
          /All 2 job slots hold running jobs, so nothing was started\. Stop jobs you no longer need with kill_session/,
        );
        return true;
      },
    );
    assert.equal(registry.size, 2);
  });
});

describe("signal names", () => {
  it("normalizes the ways a model writes them", () => {
    for (const [raw, name] of [
      ["term", "SIGTERM"],
      ["INT", "SIGINT"],
      ["sigkill", "SIGKILL"],
      [" SIGHUP ", "SIGHUP"],
      ["Quit", "SIGQUIT"],
    ]) {
      assert.equal(normalizeSignal(raw!), name);
    }
  });

  it("rejects unknown names and numbers, listing the accepted names", () => {
    assert.throws(() => normalizeSignal("SIGFOO"), /unknown signal "SIGFOO"\. Accepted: SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGKILL/);
    assert.throws(() => normalizeSignal("9"), /signal numbers differ between platforms; use a name\. Accepted: SIGTERM/);
    assert.throws(() => normalizeSignal("stop"), /unknown signal "stop"/);
  });
});
