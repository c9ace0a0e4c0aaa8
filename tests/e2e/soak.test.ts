/**
 * A short soak of a long session through the real Pi CLI on the newest host: 150 calls of a mixed
 * workload with a `/reload` between, against the same commands through Pi's bash tool in a host of
 * its own. Descriptors stay flat, no job process is left, no exit is reported twice, and what the
 * session keeps grows no more than the control's transcript plus a bound. (`npm run bench` runs 1
 * 000 calls.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { soak } from "../bench/soak.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";

/** The bound on what our heap may grow beyond the control's, after a full GC (the goal is 10 MiB over 1 000 calls). */
const HEAP_MARGIN_MIB = 10;

for (const host of NEWEST_HOST_ONLY) {
  describe(`a soak of 150 calls with a reload on ${host.name}`, () => {
    it("keeps descriptors flat, leaves no job running, reports each exit once, and keeps little", async () => {
      const ours = await soak(host, "exec_command", 150, 15);
      const control = await soak(host, "bash", 150, 15);
      assert.equal(ours.reloads, 1);
      assert.ok(ours.descriptors.after <= ours.descriptors.before + 2, `descriptors ${JSON.stringify(ours.descriptors)}`);
      assert.equal(ours.leftover_processes, 0);
      assert.deepEqual(ours.exits_reported_twice, []);
      assert.ok(
        ours.heap_after_gc_MiB.growth <= control.heap_after_gc_MiB.growth + HEAP_MARGIN_MIB,
        `heap growth ${ours.heap_after_gc_MiB.growth} MiB against the control's ${control.heap_after_gc_MiB.growth} MiB`,
      );
    });
  });
}
