/**
 * The input wake's timing rule with a stepped clock (times are plain numbers here) and its record
 * kind in the completion ledger: the wait counted only while untouched and waiting, once per
 * prompt, the environment value; one wake through the ledger's batches, with an exit or a
 * pattern wake as one prompt, never without a wake armed, never under a call's lease, dropped by a
 * call, the exit, a kill and shutdown.
 */
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { WAKE_DEBOUNCE_MS } from "../../../src/core/completion/completion-ledger.ts";
import { lastVisibleLine } from "../../../src/core/completion/job-wakes.ts";
import type { InputWakeJob, WakeBatch } from "../../../src/core/completion/wake-delivery.ts";
import { InputWakeRule, inputWakeMs } from "../../../src/core/input-wait/input-wake-rule.ts";
import type { SteppedClock } from "../../helpers/clock.ts";
import { exitWake, ledgerOn, steppedWakes, type TestLedger } from "../../helpers/stepped-ledger.ts";

const AFTER_MS = 30_000;

/** Probes a rule once a second from `from` to `to` (ms), with the job's state as `state` says; returns when it fired. */
function run(rule: InputWakeRule, from: number, to: number, state: (now: number) => { held?: boolean; bytes?: number; likely?: boolean }) {
  const fired: number[] = [];
  for (let now = from; now <= to; now += 1_000) {
    const { held = false, bytes = 10, likely = true } = state(now);
    if (rule.observe(now, held, bytes, () => likely)) fired.push(now);
  }
  return fired;
}

describe("the input wake's rule", () => {
  it("fires once the job has waited for input, untouched, for the whole time, and once per prompt", () => {
    const rule = new InputWakeRule(AFTER_MS);
    assert.deepEqual(
      run(rule, 0, 120_000, () => ({})),
      [30_000],
      "once, however long it waits after",
    );
  });

  it("more output is a new prompt: it counts again from there and fires again", () => {
    const rule = new InputWakeRule(AFTER_MS);
    const fired = run(rule, 0, 100_000, (now) => ({ bytes: now < 50_000 ? 10 : 20 }));
    assert.deepEqual(fired, [30_000, 80_000]);
  });

  it("a call attached or the user typing, or a probe that says it does not wait, starts the count over", () => {
    const held = run(new InputWakeRule(AFTER_MS), 0, 60_000, (now) => ({ held: now >= 20_000 && now < 25_000 }));
    assert.deepEqual(held, [55_000]);
    const busy = run(new InputWakeRule(AFTER_MS), 0, 60_000, (now) => ({ likely: now !== 29_000 }));
    assert.deepEqual(busy, [60_000]);
  });

  it("output that keeps coming is never a wait", () => {
    assert.deepEqual(
      run(new InputWakeRule(AFTER_MS), 0, 120_000, (now) => ({ bytes: now })),
      [],
    );
  });

  it("never probes a job that is held or already woken for this prompt", () => {
    const rule = new InputWakeRule(2_000);
    let probes = 0;
    const probe = () => {
      probes++;
      return true;
    };
    rule.observe(0, true, 5, probe);
    assert.equal(probes, 0);
    for (let now = 0; now <= 2_000; now += 1_000) rule.observe(now, false, 5, probe);
    assert.equal(probes, 3);
    for (let now = 3_000; now <= 10_000; now += 1_000) rule.observe(now, false, 5, probe);
    assert.equal(probes, 3, "the same prompt is not probed again");
  });

  it("as the wake goes out it still holds only if the job printed nothing since and still waits; if not, a later wait wakes again", () => {
    const rule = new InputWakeRule(2_000);
    const fire = (from: number, bytes: number) => run(rule, from, from + 2_000, () => ({ bytes }));
    assert.deepEqual(fire(0, 5), [2_000]);
    assert.equal(
      rule.stillDue(5, () => true),
      true,
      "the same prompt, still read",
    );
    assert.equal(
      rule.stillDue(9, () => true),
      false,
      "it printed more: that prompt is gone",
    );
    assert.deepEqual(fire(10_000, 5), [12_000], "a wait at that count again is a new prompt");
    assert.equal(
      rule.stillDue(5, () => false),
      false,
      "it no longer reads its stdin",
    );
    assert.deepEqual(fire(20_000, 5), [22_000], "waiting again later wakes again");
  });

  it("PI_UNIFIED_EXEC_INPUT_WAKE_S: 2–3600 s, 0 off, anything else the default 30 s", () => {
    assert.equal(inputWakeMs({}), 30_000);
    assert.equal(inputWakeMs({ PI_UNIFIED_EXEC_INPUT_WAKE_S: "2" }), 2_000);
    assert.equal(inputWakeMs({ PI_UNIFIED_EXEC_INPUT_WAKE_S: "3600" }), 3_600_000);
    assert.equal(inputWakeMs({ PI_UNIFIED_EXEC_INPUT_WAKE_S: "0" }), undefined);
    for (const bad of ["1", "3601", "-5", "1.5", "soon", ""]) assert.equal(inputWakeMs({ PI_UNIFIED_EXEC_INPUT_WAKE_S: bad }), 30_000, bad);
  });

  it("quotes the last line with something on it, its end kept when long", () => {
    assert.equal(lastVisibleLine("building\nOverwrite? [y/N] "), "Overwrite? [y/N]");
    assert.equal(lastVisibleLine("Name:\n\n  \n"), "Name:");
    const long = lastVisibleLine(`${"x".repeat(500)} Continue? [y/N] `);
    assert.equal([...long].length, 300);
    assert.ok(long.endsWith("Continue? [y/N]"));
  });
});

const prompt = (jobId: number, line = "Overwrite? [y/N]"): InputWakeJob => ({ jobId, command: `job ${jobId}`, line, waitedMs: AFTER_MS });

describe("input wakes through the completion ledger", () => {
  let clock: SteppedClock;
  let sent: WakeBatch[];
  let answered: Set<number>;
  let ledger: TestLedger;
  beforeEach(() => {
    ({ clock, sent, answered, ledger } = steppedWakes());
  });

  it("goes out once after the debounce, naming the job, the command and the line", () => {
    ledger.arm(4);
    ledger.inputWaits(prompt(4));
    assert.equal(sent.length, 0);
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(sent, [{ jobs: [], more: 0, inputs: [prompt(4)] }]);
    clock.advance(10_000);
    assert.equal(sent.length, 1, "exactly once");
    assert.equal(ledger.exitLevel(4), "wake", "the exit's wake is untouched");
  });

  it("a job with only a pattern armed may wake for input; a job with no wake armed never does", () => {
    ledger.armPattern(5, "ERROR", "server");
    ledger.inputWaits(prompt(5));
    ledger.inputWaits(prompt(6));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.deepEqual(
      sent.flatMap((batch) => batch.inputs ?? []).map((wake) => wake.jobId),
      [5],
    );
  });

  it("an input wake and an exit in the same batch are one prompt", () => {
    ledger.arm(1);
    ledger.arm(2);
    ledger.inputWaits(prompt(1));
    ledger.jobExited({ jobId: 2, command: "b", cwd: "/", exitCode: 0, signal: null, elapsedMs: 5, logPath: "/l" });
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(sent.length, 1);
    assert.deepEqual(
      sent[0]!.jobs.map((job) => job.jobId),
      [2],
    );
    assert.deepEqual(
      sent[0]!.inputs?.map((wake) => wake.jobId),
      [1],
    );
  });

  it("a wake held during a run is asked again at the settle: the job that stopped waiting meanwhile wakes nobody", () => {
    ledger.runStarted();
    ledger.arm(1);
    ledger.arm(2);
    ledger.inputWaits(prompt(1));
    ledger.inputWaits(prompt(2));
    clock.advance(10_000);
    assert.equal(ledger.waiting, 2, "both held for the run");
    answered.add(1); // its prompt timed out and it printed more
    ledger.runSettled();
    assert.deepEqual(
      sent.flatMap((batch) => batch.inputs ?? []).map((wake) => wake.jobId),
      [2],
    );
    assert.equal(ledger.waiting, 0);
  });

  it("a call on the job, its lease, its exit, a kill or shutdown drops what waits", () => {
    for (const [name, moot] of [
      ["a call", (c: TestLedger) => c.lease(undefined, 1)],
      ["a lease", (c: TestLedger) => c.lease("call-1", 1)],
      ["the exit", (c: TestLedger) => c.jobExited(exitWake(1))],
      ["a kill", (c: TestLedger) => c.hold(1)],
      ["shutdown", (c: TestLedger) => c.dropAll()],
    ] as const) {
      sent = [];
      const c = ledgerOn(clock, (batch) => sent.push(batch));
      c.arm(1);
      c.inputWaits(prompt(1));
      moot(c);
      clock.advance(WAKE_DEBOUNCE_MS * 4);
      assert.equal(sent.flatMap((batch) => batch.inputs ?? []).length, 0, name);
    }
  });

  it("a batch whose send threw is retried, without the input wake of a job the model called on meanwhile", () => {
    let fail = true;
    const c = ledgerOn(clock, (batch) => {
      if (fail) throw new Error("stale API");
      sent.push(batch);
    });
    c.arm(1);
    c.arm(2);
    c.inputWaits(prompt(1));
    c.inputWaits(prompt(2));
    clock.advance(WAKE_DEBOUNCE_MS);
    assert.equal(c.waiting, 2);
    c.lease(undefined, 1); // a call on job 1
    fail = false;
    c.runSettled();
    assert.deepEqual(
      sent.flatMap((batch) => batch.inputs ?? []).map((wake) => wake.jobId),
      [2],
    );
  });
});
