/**
 * How loud a job may be (SPEC §3f), on plain data: the turn budget's window with a fake clock, the
 * level a notice goes out at, the decision point with plain kinds; then the levels through the
 * ledger on a stepped clock: a `next_turn` notice never starts a turn, rides with the next run,
 * exactly once, and is dropped when made moot before it; `set_on_exit` moves a level; an input wait
 * and a deaf server follow the exit's level; a spent budget holds pattern wakes and deaf servers for
 * the next turn with a count while a failed exit still wakes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TurnBudget, wakeTurnsFromEnv } from "../../../src/core/completion/attention.ts";
import { CompletionLedger, WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import { DecisionPoint } from "../../../src/core/completion/decision-point.ts";
import type { InputWakeJob } from "../../../src/core/completion/wake-delivery.ts";
import { SteppedClock } from "../../helpers/clock.ts";
import { exitOf, exitWake, REPORT, steppedWakes, type TestLedger } from "../../helpers/stepped-ledger.ts";

const MINUTE = 60_000;

describe("the turn budget and the levels, on data", () => {
  it("PI_UNIFIED_EXEC_WAKE_TURNS: a whole number, 0 for no limit, anything else the default 6", () => {
    assert.equal(wakeTurnsFromEnv({}), 6);
    assert.equal(wakeTurnsFromEnv({ PI_UNIFIED_EXEC_WAKE_TURNS: "2" }), 2);
    assert.equal(wakeTurnsFromEnv({ PI_UNIFIED_EXEC_WAKE_TURNS: " 0 " }), 0);
    for (const bad of ["-1", "1.5", "six", ""]) assert.equal(wakeTurnsFromEnv({ PI_UNIFIED_EXEC_WAKE_TURNS: bad }), 6, bad);
  });

  it("counts the turns started in the last ten minutes: each frees its place ten minutes after it started", () => {
    let now = 0;
    const budget = new TurnBudget(() => now, 2);
    assert.equal(budget.open, true);
    budget.spend();
    now = 4 * MINUTE;
    budget.spend();
    assert.equal(budget.open, false, "two turns in the window");
    assert.equal(budget.decide("wake"), "held", "a wake it cannot pay waits for the next turn");
    assert.equal(budget.decide("next_turn"), "next_turn");
    now = 10 * MINUTE - 1;
    assert.equal(budget.open, false);
    now = 10 * MINUTE;
    assert.equal(budget.open, true, "the first turn left the window");
    assert.equal(budget.decide("wake"), "wake");
    budget.spend();
    assert.equal(budget.open, false);
    now = 14 * MINUTE;
    assert.equal(budget.open, true);
  });

  it("0 turns is no limit", () => {
    const budget = new TurnBudget(() => 0, 0);
    for (let i = 0; i < 100; i++) budget.spend();
    assert.equal(budget.decide("wake"), "wake");
  });

  it("an input or deaf-server notice follows the exit's level, and wakes when only a pattern is armed", () => {
    const open = new TurnBudget(() => 0, 0);
    assert.equal(open.decide("next_turn"), "next_turn");
    assert.equal(open.decide("wake"), "wake");
    assert.equal(open.decide(undefined), "wake");
  });
});

describe("the decision point on plain kinds", () => {
  /** One kind whose notices are the job ids as text, due while in `eligible`, at the level `levels` says. */
  function pointOf(clock: SteppedClock) {
    const eligible = new Set<number>();
    const levels = new Map<number, "wake" | "next_turn" | "held">();
    const sent: { notice: string[]; held: number }[] = [];
    const kind = {
      eligible: (jobId: number) => eligible.has(jobId),
      level: (jobId: number) => levels.get(jobId) ?? "wake",
      take: (jobId: number) => `job ${jobId}`,
    };
    const point = new DecisionPoint<{ notice: string }>({ notice: kind }, clock, 250, (taken) =>
      sent.push({ notice: taken.notice, held: taken.held }),
    );
    const queue = (jobId: number, level: "wake" | "next_turn" | "held" = "wake") => {
      eligible.add(jobId);
      levels.set(jobId, level);
      point.schedule("notice", jobId);
    };
    return { point, eligible, levels, sent, queue };
  }

  it("re-checks each notice as it decides: one no longer eligible is dropped, the others go out as one batch", () => {
    const clock = new SteppedClock();
    const { point, eligible, sent, queue } = pointOf(clock);
    queue(1);
    queue(2);
    eligible.delete(1); // a call read it meanwhile
    clock.advance(250);
    assert.deepEqual(sent, [{ notice: ["job 2"], held: 0 }]);
    assert.equal(point.count, 0);
  });

  it("sends nothing while the host runs, and decides at the settle", () => {
    const clock = new SteppedClock();
    const { point, sent, queue } = pointOf(clock);
    point.runStarted();
    queue(1);
    clock.advance(10_000);
    assert.deepEqual(sent, []);
    point.runSettled();
    assert.deepEqual(sent, [{ notice: ["job 1"], held: 0 }]);
  });

  it("keeps next_turn and held notices queued until a wake goes out, which takes them along", () => {
    const clock = new SteppedClock();
    const { point, sent, queue } = pointOf(clock);
    queue(1, "next_turn");
    queue(2, "held");
    clock.advance(1_000);
    point.runSettled();
    assert.deepEqual(sent, [], "neither starts a turn");
    assert.equal(point.count, 2);
    assert.equal(point.heldByBudget, 1);
    queue(3);
    clock.advance(250);
    assert.deepEqual(sent, [{ notice: ["job 1", "job 2", "job 3"], held: 1 }]);
    assert.equal(point.heldByBudget, 0);
  });

  it("a notice the budget held stays held, even when its kind would let it wake now", () => {
    const clock = new SteppedClock();
    const { point, levels, sent, queue } = pointOf(clock);
    queue(1, "held");
    clock.advance(250);
    levels.set(1, "wake"); // the window freed a turn
    point.runSettled();
    assert.deepEqual(sent, []);
    assert.deepEqual(point.takeForTurn(), { notice: ["job 1"], held: 1 });
  });

  it("a run starting takes every notice still due, whatever its level, and nothing that is no longer due", () => {
    const clock = new SteppedClock();
    const { point, eligible, sent, queue } = pointOf(clock);
    queue(1, "next_turn");
    queue(2, "next_turn");
    queue(3); // in the batch window when the user's prompt starts a run
    eligible.delete(2);
    assert.deepEqual(point.takeForTurn(), { notice: ["job 1", "job 3"], held: 0 });
    clock.advance(1_000);
    assert.deepEqual(sent, [], "the batch window's timer is gone with what it gathered");
    assert.equal(point.takeForTurn(), undefined);
  });
});

const prompt = (jobId: number): InputWakeJob => ({ jobId, command: `job ${jobId}`, line: "Continue? [y/N]", waitedMs: 30_000 });
const deaf = (jobId: number) => ({ jobId, command: `server ${jobId}`, was: ["127.0.0.1:3000"], closedMs: 2_000 });

describe("levels through the ledger", () => {
  it("a next_turn exit never starts a turn and rides with the next run exactly once", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1, "next_turn");
    ledger.jobExited(exitWake(1));
    clock.advance(60_000);
    ledger.runSettled();
    assert.deepEqual(sent, [], "no wake, whatever the time");
    assert.equal(ledger.waiting, 1);
    const batch = ledger.takeForTurn();
    assert.deepEqual(
      batch?.jobs.map((job) => job.jobId),
      [1],
    );
    assert.equal(batch?.nextTurn, true);
    ledger.runSettled();
    assert.equal(ledger.takeForTurn(), undefined, "exactly once");
    assert.equal(ledger.setOnExit(1, "wake", true), "too_late");
  });

  it("a next_turn exit the model read before the next turn is never delivered (the read lands between the hold and the turn)", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1, "next_turn");
    ledger.jobExited(exitWake(1, { exitCode: 2 }));
    clock.advance(WAKE_DEBOUNCE_MS * 4); // decided: held for the next turn
    assert.equal(ledger.waiting, 1);
    const poll = ledger.lease("poll", 1); // the model polls the job in a run of its own
    poll.settle(REPORT, exitOf(1));
    ledger.callEnded("poll", false);
    assert.equal(ledger.takeForTurn(), undefined);
    assert.deepEqual(sent, []);
    assert.equal(ledger.waiting, 0);
  });

  it("a next_turn notice taken by a listing, a kill or a disarm before the turn is dropped", () => {
    for (const [name, moot] of [
      [
        "a listing",
        (l: TestLedger) => {
          l.observed("list", exitOf(1));
          l.callEnded("list", false);
        },
      ],
      ["a kill", (l: TestLedger) => l.drop(1)],
      ["a disarm", (l: TestLedger) => l.setOnExit(1, "none", true)],
    ] as const) {
      const { clock, ledger } = steppedWakes();
      ledger.arm(1, "next_turn");
      ledger.jobExited(exitWake(1));
      clock.advance(WAKE_DEBOUNCE_MS);
      moot(ledger);
      assert.equal(ledger.takeForTurn(), undefined, name);
    }
  });

  it("set_on_exit moves an armed exit wake between levels, a held tombstone included, and disarms it", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1);
    assert.equal(ledger.setOnExit(1, "next_turn", false), "armed");
    assert.equal(ledger.setOnExit(1, "next_turn", false), "already_armed");
    assert.equal(ledger.exitLevel(1), "next_turn");
    ledger.jobExited(exitWake(1));
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.equal(sent.length, 0, "held for the next turn");
    assert.equal(ledger.setOnExit(1, "wake", true), "armed");
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(
      sent.map((batch) => batch.jobs.map((job) => job.jobId)),
      [[1]],
      "back to wake: it goes out after the batch window",
    );
    ledger.arm(2);
    assert.equal(ledger.setOnExit(2, "none", false), "disarmed");
    ledger.jobExited(exitWake(2));
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.equal(ledger.takeForTurn(), undefined);
    assert.equal(sent.length, 1);
  });

  it("a pattern armed at next_turn is held; an input wait follows the exit's level, and wakes when only a pattern is armed", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.armPattern(1, "ERROR", "server", "next_turn");
    assert.equal(ledger.patternOf(1), "next_turn:ERROR", "as the model writes it");
    ledger.patternHit(1, "ERROR one", 1);
    ledger.arm(2, "next_turn");
    ledger.inputWaits(prompt(2));
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.equal(sent.length, 0);
    ledger.inputWaits(prompt(1)); // only a next_turn pattern is armed on job 1: the input wait wakes
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    assert.deepEqual(
      sent[0]!.inputs?.map((wake) => wake.jobId),
      [2, 1],
      "the wake takes what waits for the next turn along",
    );
    assert.deepEqual(
      sent[0]!.patterns?.map((wake) => wake.jobId),
      [1],
    );
  });

  it("a deaf server's notice follows the exit's level, and wakes when only a pattern is armed", () => {
    const { clock, sent, ledger } = steppedWakes();
    ledger.arm(1, "next_turn");
    ledger.deafServer(deaf(1));
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    ledger.runSettled();
    assert.equal(sent.length, 0, "a next_turn job's lost port starts no turn");
    assert.equal(ledger.waiting, 1);
    ledger.armPattern(2, "ERROR", "server 2", "next_turn");
    ledger.deafServer(deaf(2));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(
      sent.map((batch) => batch.deaf?.map((wake) => wake.jobId)),
      [[1, 2]],
      "only a pattern armed on job 2: it wakes, and takes job 1's along",
    );
    assert.equal(ledger.takeForTurn(), undefined, "exactly once");
  });

  it("a spent turn budget holds a deaf server's notice for the next turn, while a failed exit still wakes and takes it along", () => {
    const { clock, sent, ledger } = steppedWakes(1);
    ledger.armPattern(1, "ERROR", "a");
    ledger.patternHit(1, "ERROR a", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1, "the one turn of the budget");
    ledger.arm(2);
    ledger.deafServer(deaf(2));
    clock.advance(WAKE_DEBOUNCE_MS * 4);
    assert.equal(sent.length, 1, "held: the budget is spent");
    assert.deepEqual(ledger.heldByBudget, { count: 1, turns: 1 });
    ledger.arm(3);
    ledger.jobExited(exitWake(3, { exitCode: 1 }));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 2, "an exit keeps its level");
    assert.deepEqual(
      sent[1]!.deaf?.map((wake) => wake.jobId),
      [2],
    );
    assert.equal(sent[1]!.held, 1);
  });

  it("with a budget of 2, the third pattern wake is held for the next turn with a count, while a failed exit still wakes at once", () => {
    const { clock, sent, ledger } = steppedWakes(2);
    for (const id of [1, 2, 3]) ledger.armPattern(id, "ERROR", `server ${id}`);
    for (const id of [1, 2, 3]) {
      ledger.patternHit(id, `ERROR ${id}`, 1);
      clock.advance(WAKE_DEBOUNCE_MS);
    }
    assert.equal(sent.length, 2, "two turns");
    assert.deepEqual(ledger.heldByBudget, { count: 1, turns: 2 });
    ledger.arm(4);
    ledger.jobExited(exitWake(4, { exitCode: 1 }));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 3, "the failed exit woke at once");
    assert.deepEqual(
      sent[2]!.jobs.map((job) => job.jobId),
      [4],
    );
    assert.deepEqual(
      sent[2]!.patterns?.map((wake) => wake.jobId),
      [3],
      "the held match rides with that turn",
    );
    assert.equal(sent[2]!.held, 1);
    ledger.patternHit(1, "ERROR again", 1); // the cooldown holds it, then the budget
    clock.advance(31_000);
    assert.equal(sent.length, 3);
    const batch = ledger.takeForTurn();
    assert.deepEqual(
      batch?.patterns?.map((wake) => wake.jobId),
      [1],
    );
    assert.equal(batch?.held, 1);
    assert.equal(batch?.nextTurn, true);
    assert.deepEqual(ledger.heldByBudget, { count: 0, turns: 2 });
  });

  it("during a run, counts as held the notices the spent budget will hold at the settle", () => {
    const { clock, sent, ledger } = steppedWakes(1);
    ledger.armPattern(1, "ERROR", "a");
    ledger.armPattern(2, "ERROR", "b");
    ledger.patternHit(1, "ERROR a", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    ledger.runStarted();
    ledger.patternHit(2, "ERROR b", 1);
    assert.deepEqual(ledger.heldByBudget, { count: 1, turns: 1 }, "a listing in the run says so");
    ledger.runSettled();
    assert.equal(sent.length, 1, "held at the settle");
    assert.equal(ledger.takeForTurn()?.held, 1);
  });

  it("a next_turn notice of a job a person typed into rides without its line", () => {
    const clock = new SteppedClock();
    const ledger = new CompletionLedger<unknown>(
      { draining: () => false, waitsForInput: () => true, typedInto: (jobId) => jobId === 1, listensAgain: () => false },
      { clock, wakeTurns: 0 },
    );
    ledger.armPattern(1, "token", "login", "next_turn");
    ledger.patternHit(1, "token: s3cret", 1);
    clock.advance(WAKE_DEBOUNCE_MS);
    const batch = ledger.takeForTurn();
    assert.equal(batch?.patterns?.[0]?.lineWithheld, true);
    assert.doesNotMatch(JSON.stringify(batch), /s3cret/);
  });
});
