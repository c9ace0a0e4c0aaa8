/**
 * The time the process's output readers may spend in one turn of the event loop (transport/output-reader.ts), on a
 * clock and a "next turn" the test moves by hand: deliveries add up across readers within a turn, the
 * share is spent at READ_TURN_MS, and the next turn starts afresh; a turn with no read schedules nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  READ_REST_SMALL_BYTES,
  READ_REST_STREAMING_MS,
  READ_TURN_MS,
  ReadRest,
  ReadTurn,
} from "../../../src/core/transport/output-reader.ts";

function steppedTurn() {
  const state = { now: 0, pending: [] as (() => void)[], rests: 0 };
  const turn = new ReadTurn(
    () => state.now,
    (callback) => state.pending.push(callback),
    // A loop that always waits in its poll: whether a read rests is this file's question alone.
    new ReadRest({ now: () => state.now, loopIdleMs: () => state.now, sleep: () => state.rests++ }),
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
  return { state, turn, deliver, endTurn };
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

  it("rests after a small read of a streaming pipe, once per turn for all pipes", () => {
    const { state, turn, endTurn } = steppedTurn();
    turn.start();
    assert.equal(turn.rest(4096, 0.05), true);
    turn.start();
    assert.equal(turn.rest(4096, 0.05), false, "another pipe in the same turn: its bytes gathered meanwhile too");
    endTurn();
    turn.start();
    assert.equal(turn.rest(4096, 0.05), true, "the next turn may rest again");
    assert.equal(state.rests, 2);
  });

  it("never rests after a large read or after a read that came after a pause", () => {
    const { state, turn } = steppedTurn();
    turn.start();
    assert.equal(turn.rest(READ_REST_SMALL_BYTES, 0.05), false, "the producer is ahead: read on");
    assert.equal(turn.rest(100, READ_REST_STREAMING_MS + 1), false, "a line after a pause: nothing streams");
    assert.equal(state.rests, 0);
  });
});
