import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { type Clock, CompletionCoordinator, type WakeBatch } from "../../../src/core/completion/wakes.ts";
import { exitWake } from "../../helpers/wake-coordinator.ts";

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

describe("CompletionCoordinator", () => {
  let clock: ManualClock;
  let sent: WakeBatch[];
  let coordinator: CompletionCoordinator;
  beforeEach(() => {
    clock = new ManualClock();
    sent = [];
    coordinator = new CompletionCoordinator((batch) => sent.push(batch), clock);
  });
  const woken = () => sent.flatMap((batch) => batch.jobs.map((job) => job.jobId));

  it("wakes once for an armed job that exits unobserved, after the debounce", () => {
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    assert.deepEqual(sent, [], "not before the debounce");
    clock.tick();
    assert.deepEqual(woken(), [1]);
    coordinator.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(woken(), [1], "never twice");
  });

  it("never wakes for a job that was not armed", () => {
    coordinator.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("a finalized call that returned the exit consumes the wake", () => {
    coordinator.arm(1);
    coordinator.lease("call-a", 1);
    coordinator.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, [], "held while watched");
    coordinator.observed("call-a", 1);
    coordinator.finalize("call-a", false);
    clock.tick();
    assert.deepEqual(sent, []);
    assert.equal(coordinator.isArmed(1), false);
  });

  it("a call that failed, was cancelled, or returned without the exit leaves the wake eligible", () => {
    coordinator.arm(1);
    coordinator.arm(2);
    coordinator.arm(3);
    coordinator.observed("errored", 1);
    coordinator.lease("cancelled", 2);
    coordinator.lease("deadline", 3);
    for (const id of [1, 2, 3]) coordinator.jobExited(exit(id));
    coordinator.finalize("errored", true);
    coordinator.release("cancelled");
    coordinator.release("deadline");
    clock.tick();
    assert.deepEqual(woken().sort(), [1, 2, 3]);
  });

  it("an exit while a call is attached waits for that call's outcome", () => {
    coordinator.arm(1);
    coordinator.lease("poll", 1);
    coordinator.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
    coordinator.release("poll");
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("batches exits close together into one prompt, listing at most 16 and counting the rest", () => {
    for (let id = 1; id <= 20; id++) {
      coordinator.arm(id);
      coordinator.jobExited(exit(id));
    }
    clock.tick();
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.jobs.length, 16);
    assert.equal(sent[0]!.more, 4);
  });

  it("a listing that observes the exit during the debounce consumes the not-yet-sent wake", () => {
    coordinator.arm(1);
    coordinator.jobExited(exit(1));
    coordinator.observed("list", 1);
    clock.tick();
    coordinator.finalize("list", false);
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("suppression holds the wake; a failed kill restores it; a successful one drops it", () => {
    coordinator.arm(1);
    coordinator.arm(2);
    const restore1 = coordinator.suppress(1);
    coordinator.suppress(2);
    coordinator.jobExited(exit(1));
    coordinator.jobExited(exit(2));
    clock.tick();
    assert.deepEqual(sent, []);
    coordinator.dropWake(2);
    restore1();
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("set_on_exit: statuses for every case", () => {
    assert.equal(coordinator.setOnExit(1, "wake", false), "armed");
    assert.equal(coordinator.setOnExit(1, "wake", false), "already_armed");
    assert.equal(coordinator.setOnExit(1, "none", false), "disarmed");
    assert.equal(coordinator.setOnExit(1, "none", false), "already_none");
    assert.equal(coordinator.setOnExit(2, "wake", true), "too_late", "the job has exited already");
    coordinator.arm(3);
    coordinator.jobExited(exit(3));
    assert.equal(coordinator.setOnExit(3, "none", true), "disarmed", "a tombstone can be disarmed before delivery");
    clock.tick();
    assert.deepEqual(sent, []);
    coordinator.arm(4);
    coordinator.jobExited(exit(4));
    clock.tick();
    assert.equal(coordinator.setOnExit(4, "none", true), "too_late", "a delivered wake cannot be recalled");
    assert.equal(coordinator.knows(4), true);
  });

  it("nested observations transfer to the enclosing call and commit when it is finalized", () => {
    coordinator.arm(1);
    coordinator.lease("nested", 1);
    coordinator.jobExited(exit(1));
    coordinator.observed("nested", 1);
    coordinator.transfer("nested", "outer");
    clock.tick();
    assert.deepEqual(sent, [], "still held by the enclosing call");
    coordinator.finalize("outer", false);
    clock.tick();
    assert.deepEqual(sent, []);
  });

  it("an enclosing call that fails releases what its nested calls observed", () => {
    coordinator.arm(1);
    coordinator.observed("nested", 1);
    coordinator.jobExited(exit(1));
    coordinator.transfer("nested", "outer");
    coordinator.finalize("outer", true);
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });

  it("a send that throws synchronously is retried later, once", () => {
    let fail = true;
    const retrying = new CompletionCoordinator((batch) => {
      if (fail) throw new Error("stale API");
      sent.push(batch);
    }, clock);
    retrying.arm(1);
    retrying.jobExited(exit(1));
    clock.tick();
    assert.deepEqual(sent, []);
    assert.equal(retrying.waiting, 1);
    fail = false;
    retrying.retry();
    retrying.retry();
    assert.deepEqual(woken(), [1]);
  });

  it("waits for a sender to be bound, and drops everything at shutdown", () => {
    const unbound = new CompletionCoordinator(undefined, clock);
    unbound.arm(1);
    unbound.jobExited(exit(1));
    clock.tick();
    unbound.setSender((batch) => sent.push(batch));
    unbound.retry();
    assert.deepEqual(woken(), [1]);
    unbound.arm(2);
    unbound.jobExited(exit(2));
    unbound.dropAll();
    assert.equal(clock.armed, 0);
    clock.tick();
    assert.deepEqual(woken(), [1]);
  });
});
