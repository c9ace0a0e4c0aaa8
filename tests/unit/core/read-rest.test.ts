/**
 * When a streaming pipe's small read may rest Pi's thread (transport/output-reader.ts), on a clock, a loop idle time
 * and a sleep the test moves by hand: it rests while the loop waited in its poll for its share of the
 * last window, stops once a window shows the loop busy (the reader is the slower side), starts again
 * when the loop waits again, and its own rests never count as the loop being busy.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { READ_REST_IDLE_SHARE, READ_REST_MS, READ_REST_WINDOW_MS, ReadRest } from "../../../src/core/transport/output-reader.ts";

function steppedRest() {
  const state = { now: 0, idle: 0, slept: 0 };
  const rest = new ReadRest({
    now: () => state.now,
    loopIdleMs: () => state.idle,
    sleep: (ms) => {
      state.slept += ms;
      state.now += ms;
    },
  });
  /** The loop runs `ms`, `idleShare` of it waiting in its poll. */
  const run = (ms: number, idleShare: number) => {
    state.now += ms;
    state.idle += ms * idleShare;
  };
  return { state, rest, run };
}

describe("resting between a pipe's small reads", () => {
  it("rests from the start, a tenth of a millisecond each time", () => {
    const { state, rest } = steppedRest();
    assert.equal(rest.rest(), true);
    assert.equal(state.slept, READ_REST_MS);
  });

  it("stops after a window in which the loop hardly waited, and starts again after one in which it did", () => {
    const { rest, run } = steppedRest();
    run(READ_REST_WINDOW_MS, READ_REST_IDLE_SHARE / 2);
    assert.equal(rest.rest(), false, "the reader is the slower side: a rest would only delay it");
    run(READ_REST_WINDOW_MS / 2, 1);
    assert.equal(rest.rest(), false, "decided once per window");
    run(READ_REST_WINDOW_MS / 2, 1);
    assert.equal(rest.rest(), true, "the loop waited for the producer again");
  });

  it("leaves its own rests out: a window spent mostly resting, the rest of it waiting in the poll, still rests", () => {
    const { state, rest, run } = steppedRest();
    // Most of the window is the thread resting; what is left is shared between reading and waiting.
    while (state.now < READ_REST_WINDOW_MS) {
      rest.rest();
      run(READ_REST_MS / 2, READ_REST_IDLE_SHARE * 2);
    }
    assert.equal(rest.rest(), true);
  });

  it("stops when only its rests kept the loop from reading: the rest of the window was all reading", () => {
    const { state, rest, run } = steppedRest();
    while (state.now < READ_REST_WINDOW_MS) {
      rest.rest();
      run(READ_REST_MS / 2, 0);
    }
    assert.equal(rest.rest(), false);
  });
});
