import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import { PATTERN_WAKE_BUDGET } from "../../../src/core/completion/pattern-wakes.ts";
import type { WakeBatch } from "../../../src/core/completion/wake-delivery.ts";
import type { SteppedClock } from "../../helpers/clock.ts";
import { exitOf, exitWake, ledgerOn, REPORT, steppedWakes, TEST_COOLDOWN_MS, type TestLedger } from "../../helpers/stepped-ledger.ts";

const exit = (jobId: number) => exitWake(jobId);

describe("pattern wakes through the completion ledger", () => {
  let clock: SteppedClock;
  let sent: WakeBatch[];
  let ledger: TestLedger;
  beforeEach(() => {
    ({ clock, sent, ledger } = steppedWakes());
  });

  it("a match goes out after the debounce, naming the job, the pattern, the line and the command", () => {
    ledger.armPattern(3, "ERROR", "npm run dev");
    ledger.patternHit(3, "db ERROR: refused", 1);
    assert.equal(sent.length, 0);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [
      {
        jobs: [],
        more: 0,
        patterns: [{ jobId: 3, pattern: "ERROR", line: "db ERROR: refused", command: "npm run dev", more: 0, disarmed: false }],
      },
    ]);
  });

  it("twenty matches in five seconds give one wake, and the next one waits for the cooldown with the count", () => {
    ledger.armPattern(1, "x", "watcher");
    ledger.patternHit(1, "first", 1);
    for (let i = 0; i < 19; i++) {
      clock.advance(250);
      ledger.patternHit(1, `later ${i}`, 1);
    }
    clock.advance(250);
    assert.equal(sent.length, 1, "one wake in the first five seconds");
    assert.equal(sent[0]!.patterns![0]!.line, "first");
    assert.equal(sent[0]!.patterns![0]!.more, 0, "only the match before the wake went out");
    clock.advance(TEST_COOLDOWN_MS - 6_000);
    assert.equal(sent.length, 1, "nothing before the cooldown ends");
    clock.advance(2_000);
    assert.equal(sent.length, 2);
    assert.equal(sent[1]!.patterns![0]!.line, "later 0", "the first match since the last wake");
    assert.equal(sent[1]!.patterns![0]!.more, 18, "the rest counted");
  });

  it(`disarms itself with its ${PATTERN_WAKE_BUDGET}th wake when the model never calls on the job, and says so`, () => {
    ledger.armPattern(2, "ERR", "server");
    for (let i = 0; i < PATTERN_WAKE_BUDGET + 3; i++) {
      ledger.patternHit(2, `ERR ${i}`, 1);
      clock.advance(TEST_COOLDOWN_MS + WAKE_DEBOUNCE_MS);
    }
    const wakes = sent.flatMap((batch) => batch.patterns ?? []);
    assert.equal(wakes.length, PATTERN_WAKE_BUDGET);
    assert.deepEqual(
      wakes.map((wake) => wake.disarmed),
      [...Array(PATTERN_WAKE_BUDGET - 1).fill(false), true],
    );
    assert.equal(ledger.patternOf(2), undefined, "disarmed");
  });

  it("a call on the job clears what waits and starts the budget over", () => {
    ledger.armPattern(4, "ERR", "server");
    for (let i = 0; i < PATTERN_WAKE_BUDGET - 1; i++) {
      ledger.patternHit(4, `ERR ${i}`, 1);
      clock.advance(TEST_COOLDOWN_MS + WAKE_DEBOUNCE_MS);
    }
    ledger.patternHit(4, "read by the poll", 1);
    ledger.lease(undefined, 4); // a call on the job
    clock.advance(TEST_COOLDOWN_MS + WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, PATTERN_WAKE_BUDGET - 1, "the poll reads that line itself");
    for (let i = 0; i < 3; i++) {
      ledger.patternHit(4, `again ${i}`, 1);
      clock.advance(TEST_COOLDOWN_MS + WAKE_DEBOUNCE_MS);
    }
    const last = sent.flatMap((batch) => batch.patterns ?? []).slice(-3);
    assert.deepEqual(
      last.map((wake) => [wake.line, wake.disarmed]),
      [
        ["again 0", false],
        ["again 1", false],
        ["again 2", false],
      ],
    );
  });

  it("a match after the model called on the job since the last wake wakes at once: the cooldown restarts from its call", () => {
    ledger.armPattern(10, "FAIL", "vitest");
    ledger.patternHit(10, "FAIL first run", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    clock.advance(4_000); // the model reads the failure, fixes it, breaks it again by another edit
    ledger.lease(undefined, 10);
    clock.advance(3_000);
    ledger.patternHit(10, "FAIL second run", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 2, "woken within the batch window, not after the cooldown");
    assert.equal(sent[1]!.patterns![0]!.line, "FAIL second run");
    // No call since that wake: the next match waits for the cooldown again.
    ledger.patternHit(10, "FAIL third run", 1);
    clock.advance(TEST_COOLDOWN_MS - 1_000);
    assert.equal(sent.length, 2);
    clock.advance(1_000 + WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 3);
  });

  it("a job printing its pattern every second with nobody calling on it wakes at most once per cooldown", () => {
    ledger.armPattern(11, "tick", "ticker");
    const wokeAt: number[] = [];
    for (let second = 0; second < 125; second++) {
      ledger.patternHit(11, `tick ${second}`, 1);
      const before = sent.length;
      clock.advance(1_000);
      if (sent.length > before) wokeAt.push(second);
    }
    assert.equal(wokeAt.length, 5, `woken after seconds ${wokeAt.join(", ")}`);
    for (let i = 1; i < wokeAt.length; i++) assert.ok(wokeAt[i]! - wokeAt[i - 1]! >= TEST_COOLDOWN_MS / 1000 - 1, `${wokeAt}`);
  });

  it("a match held while a call's lease is on the job never goes out", () => {
    ledger.armPattern(5, "ERR", "server");
    const call = ledger.lease("call-1", 5);
    ledger.patternHit(5, "ERR while attached", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    call.settle(REPORT);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, []);
  });

  it("a match and the job's exit within the batch window are one prompt, and the exit wake is not consumed by it", () => {
    ledger.arm(6);
    ledger.armPattern(6, "panic", "server");
    ledger.patternHit(6, "panic: boom", 1);
    clock.advance(100);
    ledger.jobExited(exit(6));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    assert.deepEqual(
      sent[0]!.jobs.map((job) => job.jobId),
      [6],
    );
    assert.equal(sent[0]!.patterns![0]!.line, "panic: boom");
  });

  it("a kill drops a pending match, a failed kill lets later ones through, and shutdown drops everything", () => {
    ledger.armPattern(7, "ERR", "server");
    ledger.patternHit(7, "ERR before the kill", 1);
    const restore = ledger.hold(7);
    ledger.patternHit(7, "ERR while stopping", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 0);
    restore();
    ledger.patternHit(7, "ERR after a failed kill", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent[0]!.patterns![0]!.line, "ERR after a failed kill");
    ledger.patternHit(7, "ERR before shutdown", 1);
    ledger.dropAll();
    clock.advance(TEST_COOLDOWN_MS * 2);
    assert.equal(sent.length, 1);
  });

  it("a disarmed or replaced pattern says only what it is now", () => {
    ledger.armPattern(8, "old", "server");
    ledger.patternHit(8, "old line", 1);
    ledger.armPattern(8, "new", "server");
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [], "the replaced pattern's match is gone");
    assert.equal(ledger.disarmPattern(8), true);
    assert.equal(ledger.disarmPattern(8), false);
    ledger.patternHit(8, "new line", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, []);
  });
  it("a match the cooldown holds back goes out with the job's exit, in one prompt, not 30 s later about a dead job", () => {
    ledger.arm(9);
    ledger.armPattern(9, "ERROR", "server");
    ledger.patternHit(9, "ERROR one", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    clock.advance(5_000);
    ledger.patternHit(9, "ERROR: fatal, exiting", 1);
    clock.advance(100);
    ledger.jobExited(exit(9));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 2);
    assert.deepEqual(
      sent[1]!.jobs.map((job) => job.jobId),
      [9],
    );
    assert.equal(sent[1]!.patterns![0]!.line, "ERROR: fatal, exiting");
    clock.advance(TEST_COOLDOWN_MS * 2);
    assert.equal(sent.length, 2, "nothing follows");
  });

  it("a batch whose send failed loses what a call taught the model meanwhile, and what a stop dropped", () => {
    let failing = true;
    const kept: WakeBatch[] = [];
    const flaky = ledgerOn(clock, (batch) => {
      if (failing) throw new Error("stale API");
      kept.push(batch);
    });
    for (const id of [1, 2, 3]) {
      flaky.arm(id);
      flaky.armPattern(id, "ERR", `job ${id}`);
      flaky.patternHit(id, `ERR ${id}`, 1);
      flaky.jobExited(exit(id));
    }
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(flaky.waiting, 6, "the failed batch waits");
    flaky.lease(undefined, 1); // a poll read job 1's lines
    flaky.observed("call", exitOf(2)); // a result carried job 2's exit
    flaky.callEnded("call", false);
    flaky.drop(3); // job 3 was killed
    failing = false;
    flaky.runSettled();
    assert.equal(kept.length, 1);
    assert.deepEqual(
      kept[0]!.jobs.map((job) => job.jobId),
      [1],
    );
    assert.equal(kept[0]!.patterns, undefined, "job 1's lines were read; the call on job 2 read its lines too");
  });
});
