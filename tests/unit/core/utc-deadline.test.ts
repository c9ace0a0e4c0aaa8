import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { monotonicDeadline, parseUtcDeadline } from "../../../src/core/request/wait-policy.ts";
import { WaitRequestError } from "../../../src/core/shared/errors.ts";

describe("yield_until timestamps", () => {
  it("accepts strict RFC 3339 UTC, with or without milliseconds", () => {
    assert.equal(parseUtcDeadline("2026-07-21T18:30:00Z"), Date.UTC(2026, 6, 21, 18, 30, 0));
    assert.equal(parseUtcDeadline("2026-07-21T18:30:00.250Z"), Date.UTC(2026, 6, 21, 18, 30, 0, 250));
    assert.equal(parseUtcDeadline("2028-02-29T00:00:00Z"), Date.UTC(2028, 1, 29), "a real leap day");
    assert.equal(parseUtcDeadline("2126-01-01T00:00:00Z"), Date.UTC(2126, 0, 1), "no horizon limit");
  });

  const refused: [string, RegExp][] = [
    ["2026-07-21T18:30:00+02:00", /is not a strict RFC 3339 UTC timestamp/],
    ["2026-07-21T18:30:00z", /is not a strict RFC 3339 UTC timestamp/],
    ["2026-07-21 18:30:00Z", /is not a strict RFC 3339 UTC timestamp/],
    ["2026-07-21T18:30Z", /is not a strict RFC 3339 UTC timestamp/],
    ["2026-07-21T18:30:00.5Z", /is not a strict RFC 3339 UTC timestamp/],
    ["tomorrow", /is not a strict RFC 3339 UTC timestamp/],
    ["2026-02-30T00:00:00Z", /is not a real date and time/],
    ["2027-02-29T00:00:00Z", /is not a real date and time/],
    ["2026-13-01T00:00:00Z", /is not a real date and time/],
    ["2026-07-21T24:00:00Z", /is not a real date and time/],
    ["2026-07-21T23:60:00Z", /is not a real date and time/],
    ["2026-07-21T23:59:60Z", /is not a real date and time/],
  ];
  for (const [text, message] of refused) {
    it(`refuses ${text}, with tool_time_utc`, () => {
      assert.throws(
        () => parseUtcDeadline(text),
        (error: Error) => {
          assert.ok(error instanceof WaitRequestError);
          assert.match(error.message, message);
          assert.match(error.message, /tool_time_utc: \d{4}-\d\d-\d\dT/);
          return true;
        },
      );
    });
  }

  it("converts to the monotonic clock once: later clock changes cannot move it", () => {
    assert.equal(monotonicDeadline(10_000, 4_000, 500), 6_500);
    assert.equal(monotonicDeadline(1_000, 4_000, 500), -2_500, "a past deadline is already due");
  });
});
