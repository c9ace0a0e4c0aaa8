/**
 * Warm shells beside CPU burners: 20 hand-offs in a row, each job run exactly once with its output
 * and exit whole, and every equivalence scenario twice over, the same with warm shells on and off.
 * Without burners: `tests/unit/core/warm-shells.test.ts` and `warm-shell-equivalence.test.ts`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { compareAll, idleShell, pool, runHanded, spec } from "../helpers/warm-shell-scenarios.ts";

describe("warm shells beside CPU burners", () => {
  it("run every handed job exactly once, its output and exit whole (20 hand-offs beside CPU burners)", async () => {
    const { shells } = pool();
    const dir = mkdtempSync(join(tmpdir(), "piue-warm-once-"));
    const stopBurners = startBurners();
    try {
      const ran = join(dir, "ran");
      for (let round = 0; round < 20; round++) {
        if (round === 0) await idleShell(shells);
        shells.refill();
        await waitFor(() => shells.idle?.ready === true, "the next shell", 15_000);
        const job = spec(`echo ${round} >> ${ran}; echo out ${round}; echo err ${round} >&2; exit 7`);
        const adopted = await shells.handOver(job, "bash");
        assert.ok(adopted, `round ${round}: handed`);
        const result = await runHanded(job, adopted);
        assert.deepEqual(result.exit, { code: 7, signal: null }, `round ${round}`);
        assert.deepEqual(result.text.split("\n").sort(), ["", `err ${round}`, `out ${round}`], `round ${round}`);
      }
      const lines = readFileSync(ran, "utf8").trim().split("\n");
      assert.deepEqual(
        lines,
        Array.from({ length: 20 }, (_, round) => String(round)),
        "every job ran once",
      );
    } finally {
      stopBurners();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("every equivalence scenario gives the same results with warm shells on and off, twice over beside CPU burners", async () => {
    const stop = startBurners(2);
    try {
      await compareAll(2);
    } finally {
      stop();
    }
  });
});
