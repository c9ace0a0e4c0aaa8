/**
 * The one decision point for every wake (completion/decision-point.ts through the coordinator), on a
 * stepped clock: while Pi runs, exits and pattern matches are held past the batch window; when the
 * run settles each is re-checked (observed by a call, read, stopped, disarmed) and what is still due
 * goes out as one prompt. A match during an exit's drain goes with the exit. Then the same rules with
 * real jobs through a runtime (repeated beside CPU burners in `tests/stress/decision-point.test.ts`).
 */
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { CompletionCoordinator, WakeBatch } from "../../../src/core/completion/wakes.ts";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/shared/constants.ts";
import type { SteppedClock } from "../../helpers/clock.ts";
import { exitsReadAndUnreadInARun } from "../../helpers/runtime.ts";
import { exitWake, steppedWakes, TEST_COOLDOWN_MS } from "../../helpers/wake-coordinator.ts";

const exit = (jobId: number) => exitWake(jobId, { exitCode: 3 });

describe("the run-end decision point", () => {
  let clock: SteppedClock;
  let sent: WakeBatch[];
  let draining: Set<number>;
  let coordinator: CompletionCoordinator;
  beforeEach(() => {
    ({ clock, sent, draining, coordinator } = steppedWakes());
  });
  const kinds = () => sent.map((batch) => [batch.jobs.map((job) => job.jobId), (batch.patterns ?? []).map((wake) => wake.jobId)]);

  it("holds an exit during a run past the batch window and sends it when the run settles", () => {
    coordinator.runStarted();
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    clock.advance(10_000);
    assert.deepEqual(sent, [], "nothing enters Pi's queue while it runs");
    assert.equal(coordinator.waiting, 1);
    coordinator.runSettled();
    assert.deepEqual(kinds(), [[[1], []]], "at once, at the settle");
    clock.advance(10_000);
    assert.equal(sent.length, 1);
  });

  it("sends nothing at the settle for an exit a later call of the same run read (finding 1)", () => {
    coordinator.runStarted();
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    clock.advance(3_000); // the model runs `sleep 3` meanwhile
    coordinator.observed("poll", 1);
    coordinator.finalize("poll", false);
    coordinator.runSettled();
    clock.advance(1_000);
    assert.deepEqual(sent, []);
  });

  it("sends nothing for a line the run read with until_pattern and a job it killed (finding 2)", () => {
    coordinator.runStarted();
    coordinator.armPattern(1, "ERROR", "server");
    coordinator.patternHit(1, "ERROR x", 1, 10);
    clock.advance(1_000);
    coordinator.lease("until", 1);
    coordinator.finalize("until", false);
    coordinator.patternHit(1, "ERROR y", 1, 20); // printed after the read, before the kill
    clock.advance(1_000);
    const restore = coordinator.suppress(1);
    void restore;
    coordinator.dropWake(1);
    coordinator.runSettled();
    clock.advance(TEST_COOLDOWN_MS);
    assert.deepEqual(sent, []);
  });

  it("re-checks a held pattern wake at the settle: a disarm in the run removes it, a kill that failed keeps it", () => {
    coordinator.runStarted();
    coordinator.armPattern(1, "ERROR", "a");
    coordinator.armPattern(2, "ERROR", "b");
    coordinator.patternHit(1, "ERROR a", 1, 8);
    coordinator.patternHit(2, "ERROR b", 1, 8);
    clock.advance(1_000);
    coordinator.disarmPattern(1);
    coordinator.suppress(2)(); // a kill that failed gives it back...
    coordinator.patternHit(2, "ERROR b2", 1, 16); // ...and the job goes on printing
    coordinator.runSettled();
    assert.deepEqual(kinds(), [[[], [2]]]);
    assert.equal(sent[0]!.patterns![0]!.line, "ERROR b2");
  });

  it("sends an exit and a match held by one run as one prompt", () => {
    coordinator.runStarted();
    coordinator.arm(1);
    coordinator.armPattern(2, "ERROR", "b");
    coordinator.patternHit(2, "ERROR b", 1, 8);
    clock.advance(5_000);
    coordinator.jobExited(exit(1));
    coordinator.runSettled();
    assert.deepEqual(kinds(), [[[1], [2]]]);
  });

  it("goes out after the batch window when Pi is idle, exactly as before", () => {
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS - 1);
    assert.deepEqual(sent, []);
    clock.advance(1);
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("a run that starts inside the batch window holds what the window gathered", () => {
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS / 2);
    coordinator.runStarted();
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.deepEqual(sent, []);
    coordinator.runSettled();
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("holds a match during the exit's drain and sends it with the exit, as one prompt (finding 4)", () => {
    coordinator.arm(1);
    coordinator.armPattern(1, "ERROR", "job");
    draining.add(1); // the leader exited; a child still prints
    coordinator.patternHit(1, "ERROR from the child", 1, 30);
    clock.advance(1_500);
    assert.deepEqual(sent, [], "not before the exit");
    draining.delete(1);
    coordinator.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(kinds(), [[[1], [1]]]);
  });

  it("a match in the batch window before the leader exits waits for the exit too", () => {
    coordinator.arm(1);
    coordinator.armPattern(1, "ERROR", "job");
    coordinator.patternHit(1, "ERROR early", 1, 12);
    draining.add(1);
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.deepEqual(sent, []);
    draining.delete(1);
    coordinator.jobExited(exit(1));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(kinds(), [[[1], [1]]]);
  });

  it("remembers where a pattern wake announced output up to, so those lines never wake again (finding 3)", () => {
    coordinator.armPattern(1, "ERROR", "job");
    coordinator.patternHit(1, "ERROR x", 1, 14);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    assert.equal(coordinator.patternAnnouncedThrough(1), 14);
    coordinator.armPattern(1, "ERROR|WARN", "job");
    assert.equal(coordinator.patternAnnouncedThrough(1), 14, "a new pattern keeps it");
  });

  it("keeps a held wake while delivery is unbound (a reload) and sends it once bound, after the run", () => {
    coordinator.runStarted();
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    coordinator.setSender(undefined);
    coordinator.runSettled();
    assert.deepEqual(sent, []);
    coordinator.runStarted(); // the next instance comes up during a run: the retry waits too
    coordinator.setSender((batch) => sent.push(batch));
    coordinator.retry();
    assert.deepEqual(sent, []);
    coordinator.runSettled();
    assert.deepEqual(kinds(), [[[1], []]]);
  });

  it("drops what a run held at shutdown", () => {
    coordinator.runStarted();
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    coordinator.dropAll();
    coordinator.runSettled();
    clock.advance(1_000);
    assert.deepEqual(sent, []);
    assert.equal(coordinator.waiting, 0);
  });
});

describe("the run-end decision point with real jobs", () => {
  it("an exit read by a poll in the same run never also wakes, and one left unread wakes once at the settle", async () => {
    await exitsReadAndUnreadInARun();
  });
});
