/**
 * The run-end decision point with real jobs beside CPU burners, 4 rounds: an exit read by a poll in
 * the same run never also wakes, and one left unread wakes once at the settle. Once, without
 * burners: `tests/unit/core/decision-point.test.ts`.
 */
import { describe, it } from "node:test";
import { startBurners } from "../helpers/load.ts";
import { exitsReadAndUnreadInARun } from "../helpers/runtime.ts";

describe("the run-end decision point with real jobs beside burners", () => {
  it("an exit read by a poll in the same run never also wakes, and one left unread wakes once at the settle, 4 rounds beside burners", async () => {
    const stop = startBurners();
    try {
      for (let round = 0; round < 4; round++) await exitsReadAndUnreadInARun(round);
    } finally {
      stop();
    }
  });
});
