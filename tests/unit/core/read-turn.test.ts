/**
 * The time the process's output readers may spend in one turn of the event loop (read-turn.ts), on a
 * clock and a "next turn" the test moves by hand: deliveries add up across readers within a turn, the
 * share is spent at READ_TURN_MS, and the next turn starts afresh; a turn with no read schedules nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { READ_TURN_MS } from "../../../src/core/shared/constants.ts";
import { ReadTurn } from "../../../src/core/transport/read-turn.ts";

function steppedTurn() {
  const state = { now: 0, pending: [] as (() => void)[] };
  const turn = new ReadTurn(
    () => state.now,
    (callback) => state.pending.push(callback),
  );
  /** A delivery that takes `ms`: whether the turn's share is spent after it. */
  const deliver = (ms: number) => {
    const started = turn.start();
    state.now += ms;
    return turn.spent(started);
  };
  const endTurn = () => {
    for (const callback of state.pending.splice(0)) callback();
  };
  return { state, deliver, endTurn };
}

describe("the read turn", () => {
  it("adds up the deliveries of every reader in a turn and is spent at READ_TURN_MS", () => {
    const { deliver } = steppedTurn();
    const step = READ_TURN_MS / 4;
    assert.deepEqual([deliver(step), deliver(step), deliver(step)], [false, false, false]);
    assert.equal(deliver(step), true, "the fourth delivery reaches the share");
    assert.equal(deliver(0), true, "and every read after it in the same turn yields");
  });

  it("starts afresh at the next turn, which only a read schedules", () => {
    const { state, deliver, endTurn } = steppedTurn();
    assert.equal(deliver(READ_TURN_MS), true);
    assert.equal(state.pending.length, 1, "one reset for the turn, however many reads");
    deliver(1);
    assert.equal(state.pending.length, 1);
    endTurn();
    assert.equal(deliver(READ_TURN_MS / 2), false, "a new turn's share");
    endTurn();
    endTurn();
    assert.equal(state.pending.length, 0, "a turn with no read schedules nothing");
  });

  it("a single delivery longer than the share ends the turn after it (nothing is cut mid-delivery)", () => {
    const { deliver } = steppedTurn();
    assert.equal(deliver(READ_TURN_MS * 5), true);
  });
});
