/** `until_quiet_ms` and the combined conditions of a wait: validation, timing, the first condition wins, echo is not output. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkQuietMs, type QuietClock, QuietWatch } from "../../../src/core/conditions/quiet-watch.ts";
import { UntilConditions, type UntilOutcome } from "../../../src/core/conditions/until-conditions.ts";
import { compileUntilPattern } from "../../../src/core/conditions/until-pattern.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

/** A clock the test moves by hand (mocked: real timers are tested below with a real process). */
class FakeClock implements QuietClock {
  time = 0;
  private timers = new Map<number, { at: number; callback: () => void }>();
  private next = 1;
  armed = 0;

  now(): number {
    return this.time;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    this.armed++;
    const id = this.next++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time forward to `to`, running due timers in order. */
  advance(to: number): void {
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = to;
  }
}

describe("checkQuietMs", () => {
  it("accepts whole milliseconds from 100 to 60 000", () => {
    assert.equal(checkQuietMs(100), 100);
    assert.equal(checkQuietMs(60_000), 60_000);
  });

  it("refuses anything else with a clear error saying the range and what it does", () => {
    for (const value of [99, 60_001, 0, -5, 1.5, Number.NaN]) {
      assert.throws(
        () => checkQuietMs(value),
        (error: Error) => {
          assert.ok(error instanceof ExecRequestError);
          assert.match(error.message, /until_quiet_ms must be a whole number of milliseconds from 100 to 60000, got/);
          assert.match(error.message, /printed nothing for that long after printing something new/);
          return true;
        },
      );
    }
  });
});

describe("QuietWatch (fake clock)", () => {
  it("a slow starter is not quiet before its first output", () => {
    const clock = new FakeClock();
    let fired = 0;
    const watch = new QuietWatch(500, () => fired++, clock);
    watch.start(0);
    clock.advance(10_000);
    assert.equal(fired, 0);
    assert.equal(watch.deadline(), undefined);
    assert.equal(clock.pending, 0, "no timer runs before the first output");
  });

  it("fires quietMs after the last output, once", () => {
    const clock = new FakeClock();
    const firedAt: number[] = [];
    const watch = new QuietWatch(500, () => firedAt.push(clock.now()), clock);
    watch.start(0);
    clock.advance(1_000);
    watch.output(1_000);
    clock.advance(1_300);
    watch.output(1_300);
    clock.advance(1_799);
    assert.deepEqual(firedAt, []);
    clock.advance(5_000);
    assert.deepEqual(firedAt, [1_800]);
    assert.equal(watch.quiet(1_800), true);
  });

  it("uses one timer, not one per chunk: a flood of output re-arms it at most once per quiet interval", () => {
    const clock = new FakeClock();
    let fired = 0;
    const watch = new QuietWatch(500, () => fired++, clock);
    watch.start(0);
    for (let t = 0; t < 2_000; t += 1) {
      clock.advance(t);
      watch.output(t);
    }
    clock.advance(3_000);
    assert.equal(fired, 1);
    assert.ok(clock.armed <= 6, `armed ${clock.armed} timers for 2000 chunks`);
  });

  it("output not yet returned when the call began is new to it: quiet counts from when it was printed", () => {
    const clock = new FakeClock();
    clock.time = 10_000;
    let fired = 0;
    const watch = new QuietWatch(500, () => fired++, clock);
    watch.start(10_000, 2_000);
    assert.equal(watch.quiet(10_000), true, "quiet long ago: met at once");
    clock.advance(10_000);
    assert.equal(fired, 1);
  });

  it("a stopped watch never fires", () => {
    const clock = new FakeClock();
    let fired = 0;
    const watch = new QuietWatch(500, () => fired++, clock);
    watch.output(0);
    watch.stop();
    clock.advance(5_000);
    assert.equal(fired, 0);
    assert.equal(clock.pending, 0);
  });
});

describe("UntilConditions", () => {
  it("the first condition met wins: a match before the quiet time", () => {
    const clock = new FakeClock();
    const met: UntilOutcome[] = [];
    const until = new UntilConditions({ pattern: compileUntilPattern("ready"), quietMs: 500 }, { onMet: (o) => met.push(o), clock });
    until.begin("", undefined, 0);
    assert.equal(until.feed("starting\n", 100), undefined);
    const outcome = until.feed("ready\nmore\n", 200);
    assert.equal(outcome?.status, "matched");
    clock.advance(5_000);
    assert.equal(met.length, 1, "quiet never fires after the match");
    assert.equal(until.outcome?.status, "matched");
  });

  it("the first condition met wins: quiet before any match", () => {
    const clock = new FakeClock();
    const met: UntilOutcome[] = [];
    const until = new UntilConditions({ pattern: compileUntilPattern("ready"), quietMs: 500 }, { onMet: (o) => met.push(o), clock });
    until.begin("", undefined, 0);
    until.feed("starting\n", 100);
    clock.advance(600);
    assert.deepEqual(met, [{ status: "quiet" }]);
    assert.equal(until.feed("ready\n", 700), undefined, "after the outcome nothing more is read");
  });

  it("matches in the unread output the call begins with", () => {
    const until = new UntilConditions({ pattern: compileUntilPattern("ready") }, { partialLine: "" });
    const outcome = until.begin("x\nready\ny\n", 0, 0);
    assert.equal(outcome?.status, "matched");
    assert.equal(outcome?.status === "matched" && outcome.match.end, 8);
  });

  it("on a PTY the echo of the call's input neither matches nor counts as output for quiet", () => {
    const clock = new FakeClock();
    const met: UntilOutcome[] = [];
    const until = new UntilConditions({ pattern: compileUntilPattern("make"), quietMs: 500 }, { onMet: (o) => met.push(o), clock });
    until.begin("", undefined, 0);
    until.wrote("make\r");
    assert.equal(until.feed("make\n", 10), undefined);
    assert.equal(until.quietDeadline(), undefined, "the echo is not something new");
    clock.advance(5_000);
    assert.deepEqual(met, [], "a slow build is not quiet after its echo");
    assert.equal(until.feed("make: Nothing to be done.\n", 5_000)?.status, "matched");
  });
});
