import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Job } from "../../../src/core/job.ts";
import { JobRegistry } from "../../../src/core/registry.ts";

const fakeJob = (id: number) => ({ id }) as Job;

describe("JobRegistry", () => {
  it("allocates ids from 1 and never reuses one", () => {
    const registry = new JobRegistry();
    const ids = [registry.allocateId(), registry.allocateId(), registry.allocateId()];
    assert.deepEqual(ids, [1, 2, 3]);
    registry.publish(fakeJob(2));
    registry.remove(2);
    assert.equal(registry.allocateId(), 4);
  });

  it("makes only published jobs addressable", () => {
    const registry = new JobRegistry();
    const id = registry.allocateId();
    assert.equal(registry.get(id), undefined);
    const job = fakeJob(id);
    registry.publish(job);
    assert.equal(registry.get(id), job);
    assert.deepEqual(registry.jobs(), [job]);
    registry.remove(id);
    assert.equal(registry.get(id), undefined);
    assert.equal(registry.size, 0);
  });
});
