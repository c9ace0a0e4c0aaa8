import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { WakeBatch } from "../../../src/core/completion/wake-delivery.ts";
import type { Clock } from "../../../src/core/shared/clock.ts";
import { exitOf, exitWake, ledgerOn, REPORT, type TestLedger } from "../../helpers/stepped-ledger.ts";

/** A clock whose timers fire only when the test says so. */
class ManualClock implements Clock {
  now(): number {
    return 0;
  }
  private timers = new Map<number, () => void>();
  private next = 1;
  setTimeout(callback: () => void, _ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, callback);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Fires every pending timer (the debounce ending). */
  tick(): void {
    const due = [...this.timers.values()];
    this.timers.clear();
    for (const callback of due) callback();
  }
  get armed(): number {
    return this.timers.size;
  }
}

const exit = exitWake;

describe("the completion ledger's exit wakes", () => {
  let clock: ManualClock;
  let sent: WakeBatch[];
  let ledger: TestLedger;
  beforeEach(() => {
    clock = new ManualClock();
    sent = [];
    ledger = ledgerOn(clock, (batch) => sent.push(batch));
  });
  const woken = () => sent.flatMap((batch) => batch.jobs.map((job) => job.jobId));

  it("wakes once for an armed job that exits unobserved, after the debounce", () => {
    ledger.arm(1);
    ledger.jobExited(exit(1));
    assert.deepEqual(sent, [], "not before the debounce");
    clock.tick();
    assert.deepEqual(woken(), [1]);
    ledger.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(woken(), [1], "never twice");
  });

  it("never wakes for a job that was not armed", () => {
    ledger.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("a finalized call that returned the exit consumes the wake", () => {
    ledger.arm(1);
    ledger.lease("call-a", 1);
    ledger.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, [], "held while watched");
    ledger.observed("call-a", exitOf(1));
    ledger.callEnded("call-a", false);
    clock.tick();
    assert.deepEqual(sent, []);
    assert.equal(ledger.exitLevel(1), undefined);
  });

  it("a call that failed, was cancelled, or returned without the exit leaves the wake eligible", () => {
    ledger.arm(1);
    ledger.arm(2);
    ledger.arm(3);
    ledger.observed("errored", exitOf(1));
    const cancelled = ledger.lease("cancelled", 2);
    const deadline = ledger.lease("deadline", 3);
    for (const id of [1, 2, 3]) ledger.jobExited(exit(id));
    ledger.callEnded("errored", true);
    cancelled.settle(undefined);
    deadline.settle(REPORT);
    clock.tick();
    assert.deepEqual(woken().sort(), [1, 2, 3]);
  });

  it("an exit while a call is attached waits for that call's outcome", () => {
    ledger.arm(1);
    const poll = ledger.lease("poll", 1);
    ledger.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
    poll.settle(REPORT);
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("batches exits close together into one prompt, listing at most 16 and counting the rest", () => {
    for (let id = 1; id <= 20; id++) {
      ledger.arm(id);
      ledger.jobExited(exit(id));
    }
    clock.tick();
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.jobs.length, 16);
    assert.equal(sent[0]!.more, 4);
  });

  it("a listing that observes the exit during the debounce consumes the not-yet-sent wake", () => {
    ledger.arm(1);
    ledger.jobExited(exit(1));
    ledger.observed("list", exitOf(1));
    clock.tick();
    ledger.callEnded("list", false);
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("suppression holds the wake; a failed kill restores it; a successful one drops it", () => {
    ledger.arm(1);
    ledger.arm(2);
    const restore1 = ledger.hold(1);
    ledger.hold(2);
    ledger.jobExited(exit(1));
    ledger.jobExited(exit(2));
    clock.tick();
    assert.deepEqual(sent, []);
    ledger.drop(2);
    restore1();
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("set_on_exit: statuses for every case", () => {
    assert.equal(ledger.setOnExit(1, "wake", false), "armed");
    assert.equal(ledger.setOnExit(1, "wake", false), "already_armed");
    assert.equal(ledger.setOnExit(1, "none", false), "disarmed");
    assert.equal(ledger.setOnExit(1, "none", false), "already_none");
    assert.equal(ledger.setOnExit(2, "wake", true), "too_late", "the job has exited already");
    ledger.arm(3);
    ledger.jobExited(exit(3));
    assert.equal(ledger.setOnExit(3, "none", true), "disarmed", "a tombstone can be disarmed before delivery");
    clock.tick();
    assert.deepEqual(sent, []);
    ledger.arm(4);
    ledger.jobExited(exit(4));
    clock.tick();
    assert.equal(ledger.setOnExit(4, "none", true), "too_late", "a delivered wake cannot be recalled");
    assert.equal(ledger.knows(4), true);
  });

  it("nested observations transfer to the enclosing call and commit when it is finalized", () => {
    ledger.arm(1);
    ledger.callStarted("nested", "outer");
    const nested = ledger.lease("nested", 1);
    ledger.jobExited(exit(1));
    nested.settle(REPORT, exitOf(1));
    ledger.callEnded("nested", false);
    clock.tick();
    assert.deepEqual(sent, [], "still held by the enclosing call");
    ledger.callEnded("outer", false);
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("an enclosing call that fails releases what its nested calls observed", () => {
    ledger.arm(1);
    ledger.callStarted("nested", "outer");
    ledger.observed("nested", exitOf(1));
    ledger.jobExited(exit(1));
    ledger.callEnded("nested", false);
    ledger.callEnded("outer", true);
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("a send that throws synchronously is retried later, once", () => {
    let fail = true;
    const retrying = ledgerOn(clock, (batch) => {
      if (fail) throw new Error("stale API");
      sent.push(batch);
    });
    retrying.arm(1);
    retrying.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
    assert.equal(retrying.waiting, 1);
    fail = false;
    retrying.runSettled(); // Pi's agent_settled retries a send that threw
    retrying.runSettled();
    assert.deepEqual(woken(), [1]);
  });

  it("waits for a sender to be bound, and drops everything at shutdown", () => {
    const unbound = ledgerOn(clock, undefined);
    unbound.arm(1);
    unbound.jobExited(exit(1));
    clock.tick();
    unbound.bindSender((batch) => sent.push(batch));
    assert.deepEqual(woken(), [1]);
    unbound.arm(2);
    unbound.jobExited(exit(2));
    unbound.dropAll();
    assert.equal(clock.armed, 0);
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });
});
