/**
 * The spawn gate beside CPU burners: 20 rounds of 8 parallel spawns, one a turn. Without burners:
 * `tests/unit/core/spawn-gate.test.ts` (the helpers are `tests/helpers/spawn-turns.ts`).
 */
import { describe, it } from "node:test";
import { startBurners } from "../helpers/load.ts";
import { settled, spawnInTurn, turnMarker } from "../helpers/spawn-turns.ts";

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
