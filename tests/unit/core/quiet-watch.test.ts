/** `until_quiet_ms` and the combined conditions of a wait: validation, timing, the first condition wins, echo is not output. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import type { Clock } from "../../../src/core/shared/clock.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";
import { checkQuietMs, QuietWatch } from "../../../src/core/wait/quiet-watch.ts";

/** Output retained for a call, not yet returned. */
const unread = (text = "") => ({ head: Buffer.from(text), tail: Buffer.alloc(0), omittedBytes: 0 });

/** A clock the test moves by hand (mocked: real timers with a real process in `tests/stress/waits.test.ts`). */
class FakeClock implements Clock {
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

describe("a call's wait: its conditions together", () => {
  it("the first condition met wins: a match before the quiet time", () => {
    const clock = new FakeClock();
    const until = new CallWait({ pattern: compileUntilPattern("ready"), quietMs: 500 }, { clock });
    until.begin(unread(), undefined, 0);
    assert.equal(until.feed(Buffer.from("starting\n"), 100), undefined);
    assert.equal(until.feed(Buffer.from("ready\nmore\n"), 200), 6, "the read ends after the matched line");
    assert.equal(until.end, "matched");
    clock.advance(5_000);
    assert.equal(clock.pending, 0, "quiet never fires after the match");
    assert.equal(until.end, "matched");
  });

  it("the first condition met wins: quiet before any match", () => {
    const clock = new FakeClock();
    const until = new CallWait({ pattern: compileUntilPattern("ready"), quietMs: 500 }, { clock });
    until.begin(unread(), undefined, 0);
    until.feed(Buffer.from("starting\n"), 100);
    clock.advance(600);
    assert.equal(until.end, "quiet");
    assert.equal(until.feed(Buffer.from("ready\n"), 700), undefined, "after the outcome nothing more is read");
    assert.equal(until.matchedLine(), undefined);
  });

  it("matches in the unread output the call begins with", () => {
    const until = new CallWait({ pattern: compileUntilPattern("ready") }, { partialLine: "" });
    assert.equal(until.begin(unread("x\nready\ny\n"), 0, 0), 8);
    assert.equal(until.end, "matched");
  });

  it("on a PTY the echo of the call's input neither matches nor counts as output for quiet", () => {
    const clock = new FakeClock();
    const until = new CallWait({ pattern: compileUntilPattern("make"), quietMs: 500 }, { clock });
    until.begin(unread(), undefined, 0);
    until.wrote("make\r");
    assert.equal(until.feed(Buffer.from("make\r\n"), 10), undefined);
    assert.equal(until.quietDeadline(), undefined, "the echo is not something new");
    clock.advance(5_000);
    assert.equal(until.end, undefined, "a slow build is not quiet after its echo");
    until.feed(Buffer.from("make: Nothing to be done.\n"), 5_000);
    assert.equal(until.end, "matched");
  });
});
