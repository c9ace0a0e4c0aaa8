/**
 * Helpers of the spawn gate's tests: settle the gate, mark whose turn it is, and spawn in a turn as the
 * job starter does (the spawns are stood in for by synchronous markers).
 */
import assert from "node:assert/strict";
import { spawnGate } from "../../src/core/processes/spawn-gate.ts";

/** Settles the gate: lets every pending turn pass. */
export async function settled(): Promise<void> {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A turn marker: throws when two holders share one turn (each clears its mark at the next check phase). */
export function turnMarker() {
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
export async function spawnInTurn(mark: (who: number) => void, who: number): Promise<void> {
  const gate = spawnGate();
  if (!gate.claim()) await gate.turn();
  mark(who);
}
