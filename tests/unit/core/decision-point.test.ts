/**
 * The one decision point for every wake (completion/decision-point.ts through the ledger), on a
 * stepped clock: while Pi runs, exits and pattern matches are held past the batch window; when the
 * run settles each is re-checked (observed by a call, read, stopped, disarmed) and what is still due
 * goes out as one prompt. A match during an exit's drain goes with the exit. Then the same rules with
 * real jobs through a runtime (repeated beside CPU burners in `tests/stress/decision-point.test.ts`).
 */
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import type { WakeBatch } from "../../../src/core/completion/wake-delivery.ts";
import type { SteppedClock } from "../../helpers/clock.ts";
import { exitsReadAndUnreadInARun } from "../../helpers/runtime.ts";
import { exitOf, exitWake, REPORT, steppedWakes, TEST_COOLDOWN_MS, type TestLedger } from "../../helpers/stepped-ledger.ts";

const exit = (jobId: number) => exitWake(jobId, { exitCode: 3 });

describe("the run-end decision point", () => {
  let clock: SteppedClock;
  let sent: WakeBatch[];
  let draining: Set<number>;
  let ledger: TestLedger;
  beforeEach(() => {
    ({ clock, sent, draining, ledger } = steppedWakes());
  });
  const kinds = () => sent.map((batch) => [batch.jobs.map((job) => job.jobId), (batch.patterns ?? []).map((wake) => wake.jobId)]);

  it("holds an exit during a run past the batch window and sends it when the run settles", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.jobExited(exit(1));
    clock.advance(10_000);
    assert.deepEqual(sent, [], "nothing enters Pi's queue while it runs");
    assert.equal(ledger.waiting, 1);
    ledger.runSettled();
    assert.deepEqual(kinds(), [[[1], []]], "at once, at the settle");
    clock.advance(10_000);
    assert.equal(sent.length, 1);
  });

  it("sends nothing at the settle for an exit a later call of the same run read (finding 1)", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.jobExited(exit(1));
    clock.advance(3_000); // the model runs `sleep 3` meanwhile
    ledger.observed("poll", exitOf(1));
    ledger.callEnded("poll", false);
    ledger.runSettled();
    clock.advance(1_000);
    assert.deepEqual(sent, []);
  });

  it("sends nothing for a line the run read with until_pattern and a job it killed (finding 2)", () => {
    ledger.runStarted();
    ledger.armPattern(1, "ERROR", "server");
    ledger.patternHit(1, "ERROR x", 1, 10);
    clock.advance(1_000);
    ledger.lease("until", 1).settle(REPORT);
    ledger.callEnded("until", false);
    ledger.patternHit(1, "ERROR y", 1, 20); // printed after the read, before the kill
    clock.advance(1_000);
    const restore = ledger.hold(1);
    void restore;
    ledger.drop(1);
    ledger.runSettled();
    clock.advance(TEST_COOLDOWN_MS);
    assert.deepEqual(sent, []);
  });

  it("re-checks a held pattern wake at the settle: a disarm in the run removes it, a kill that failed keeps it", () => {
    ledger.runStarted();
    ledger.armPattern(1, "ERROR", "a");
    ledger.armPattern(2, "ERROR", "b");
    ledger.patternHit(1, "ERROR a", 1, 8);
    ledger.patternHit(2, "ERROR b", 1, 8);
    clock.advance(1_000);
    ledger.disarmPattern(1);
    ledger.hold(2)(); // a kill that failed gives it back...
    ledger.patternHit(2, "ERROR b2", 1, 16); // ...and the job goes on printing
    ledger.runSettled();
    assert.deepEqual(kinds(), [[[], [2]]]);
    assert.equal(sent[0]!.patterns![0]!.line, "ERROR b2");
  });

  it("sends an exit and a match held by one run as one prompt", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.armPattern(2, "ERROR", "b");
    ledger.patternHit(2, "ERROR b", 1, 8);
    clock.advance(5_000);
    ledger.jobExited(exit(1));
    ledger.runSettled();
    assert.deepEqual(kinds(), [[[1], [2]]]);
  });

  it("goes out after the batch window when Pi is idle, exactly as before", () => {
    ledger.arm(1);
    ledger.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS - 1);
    assert.deepEqual(sent, []);
    clock.advance(1);
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("a run that starts inside the batch window holds what the window gathered", () => {
    ledger.arm(1);
    ledger.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS / 2);
    ledger.runStarted();
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.deepEqual(sent, []);
    ledger.runSettled();
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("holds a match during the exit's drain and sends it with the exit, as one prompt (finding 4)", () => {
    ledger.arm(1);
    ledger.armPattern(1, "ERROR", "job");
    draining.add(1); // the leader exited; a child still prints
    ledger.patternHit(1, "ERROR from the child", 1, 30);
    clock.advance(1_500);
    assert.deepEqual(sent, [], "not before the exit");
    draining.delete(1);
    ledger.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(kinds(), [[[1], [1]]]);
  });

  it("a match in the batch window before the leader exits waits for the exit too", () => {
    ledger.arm(1);
    ledger.armPattern(1, "ERROR", "job");
    ledger.patternHit(1, "ERROR early", 1, 12);
    draining.add(1);
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.deepEqual(sent, []);
    draining.delete(1);
    ledger.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(kinds(), [[[1], [1]]]);
  });

  it("remembers where a pattern wake announced output up to, so those lines never wake again (finding 3)", () => {
    ledger.armPattern(1, "ERROR", "job");
    ledger.patternHit(1, "ERROR x", 1, 14);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    assert.equal(ledger.patternAnnouncedThrough(1), 14);
    ledger.armPattern(1, "ERROR|WARN", "job");
    assert.equal(ledger.patternAnnouncedThrough(1), 14, "a new pattern keeps it");
  });

  it("keeps a held wake while delivery is unbound (a reload) and sends it once bound, after the run", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.jobExited(exit(1));
    ledger.bindSender(undefined);
    ledger.runSettled();
    assert.deepEqual(sent, []);
    ledger.runStarted(); // the next instance comes up during a run: the retry waits too
    ledger.bindSender((batch) => sent.push(batch));
    assert.deepEqual(sent, []);
    ledger.runSettled();
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("drops what a run held at shutdown", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.jobExited(exit(1));
    ledger.dropAll();
    ledger.runSettled();
    clock.advance(1_000);
    assert.deepEqual(sent, []);
    assert.equal(ledger.waiting, 0);
  });
});

describe("the run-end decision point with real jobs", () => {
  it("an exit read by a poll in the same run never also wakes, and one left unread wakes once at the settle", async () => {
    await exitsReadAndUnreadInARun();
  });
});
