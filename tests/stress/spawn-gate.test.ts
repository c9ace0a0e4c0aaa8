/**
 * The spawn gate beside CPU burners: 20 rounds of 8 parallel spawns, one a turn. Without burners:
 * `tests/unit/core/spawn-gate.test.ts` (whose helpers these are).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { spawnGate } from "../../src/core/processes/spawn-gate.ts";
import { startBurners } from "../helpers/load.ts";

/** Settles the gate: lets every pending turn pass. */
async function settled(): Promise<void> {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A turn marker: throws when two holders share one turn (each clears its mark at the next check phase). */
function turnMarker() {
  let holder: number | undefined;
  return (who: number) => {
    assert.equal(holder, undefined, `spawn ${who} shares a turn with spawn ${holder}`);
    holder = who;
    setImmediate(() => {
      holder = undefined;
    });
  };
}

/** Waits its turn like the job starter does: claim, or wait and then spawn. */
async function spawnInTurn(mark: (who: number) => void, who: number): Promise<void> {
  const gate = spawnGate();
  if (!gate.claim()) await gate.turn();
  mark(who);
}

describe("spawn gate beside CPU burners", () => {
  it("keeps one spawn per turn beside CPU burners, many times over", async () => {
    const stop = startBurners(2);
    try {
      for (let round = 0; round < 20; round++) {
        await settled();
        const mark = turnMarker();
        await Promise.all(Array.from({ length: 8 }, (_, who) => spawnInTurn(mark, who)));
      }
    } finally {
      stop();
    }
  });
});
