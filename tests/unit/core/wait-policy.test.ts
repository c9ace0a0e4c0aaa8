import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { emptyPollCapMs, emptyPollWindow, execWindow, inputWindow } from "../../../src/core/request/wait-policy.ts";
import { WaitRequestError } from "../../../src/core/shared/errors.ts";

describe("wait policy", () => {
  it("exec_command: default 10 s, clamped to [250, 30 000], clamps visible", () => {
    assert.deepEqual(execWindow(undefined), { ms: 10_000 });
    assert.deepEqual(execWindow(1_000), { ms: 1_000 });
    assert.deepEqual(execWindow(10), { ms: 250, requestedMs: 10 });
    assert.deepEqual(execWindow(120_000), { ms: 30_000, requestedMs: 120_000 });
  });

  it("empty poll: default and small values rise to 5 s; up to the cap is kept; only a value the model gave counts as asked", () => {
    assert.deepEqual(emptyPollWindow(undefined, {}), { ms: 5_000 });
    assert.deepEqual(emptyPollWindow(1_000, {}), { ms: 5_000, requestedMs: 1_000 });
    assert.deepEqual(emptyPollWindow(60_000, {}), { ms: 60_000 });
    assert.deepEqual(emptyPollWindow(290_000, {}), { ms: 290_000 });
  });

  it("write_stdin with a condition and no yield_time_ms waits up to 30 s, input or not; without one a write gets 250 ms", () => {
    assert.deepEqual(inputWindow(undefined), { ms: 250 });
    assert.deepEqual(inputWindow(undefined, true), { ms: 30_000 });
    assert.deepEqual(emptyPollWindow(undefined, {}, true), { ms: 30_000 });
    assert.deepEqual(emptyPollWindow(undefined, { PI_UNIFIED_EXEC_MAX_EMPTY_POLL_MS: "10000" }, true), { ms: 10_000 });
    assert.deepEqual(inputWindow(45_000, true), { ms: 30_000, requestedMs: 45_000 }, "a given window is clamped and says what was asked");
    assert.deepEqual(inputWindow(2_000, true), { ms: 2_000 }, "a given window is kept: the condition does not lengthen it");
  });

  it("empty poll above the cap is an error carrying tool_time_utc", () => {
    assert.throws(
      () => emptyPollWindow(290_001, {}),
      (error: Error) => {
        assert.ok(error instanceof WaitRequestError);
        assert.match(error.message, /yield_time_ms 290001 is above the 290000 ms limit/);
        assert.match(error.message, /tool_time_utc: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
        return true;
      },
    );
  });

  it("the environment may only lower the cap, never below 5 s; invalid values are ignored", () => {
    const cap = (value: string) => emptyPollCapMs({ PI_UNIFIED_EXEC_MAX_EMPTY_POLL_MS: value });
    assert.equal(cap("60000"), 60_000);
    assert.equal(cap("900000"), 290_000);
    assert.equal(cap("100"), 5_000);
    for (const invalid of ["", "abc", "-5", "1.5", "0", "1e5"]) assert.equal(cap(invalid), 290_000, invalid);
    assert.throws(() => emptyPollWindow(60_001, { PI_UNIFIED_EXEC_MAX_EMPTY_POLL_MS: "60000" }), /above the 60000 ms limit/);
  });
});
