/**
 * Patterns cannot stall Pi: counted repeats that would make re2js leave its DFA are refused at
 * arming, naming the part; and a pattern that still costs a job's output more than its share is
 * suspended (the cost measure is a stepped clock that each test call moves, so every step is exact).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileUntilPattern, type LinePattern } from "../../../src/core/patterns/line-pattern.ts";
import {
  PATTERN_COST_BYTES,
  PATTERN_COST_DEBT_MS,
  PATTERN_COST_MS,
  PATTERN_COST_WARMUP_MS,
  PatternBudget,
  processCpuMs,
} from "../../../src/core/patterns/pattern-budget.ts";
import { costlyRepeats, MAX_COUNTED_REPEAT } from "../../../src/core/patterns/pattern-cost.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";
import { type PatternHit, PatternWatch } from "../../../src/core/wake-watch/pattern-watch.ts";
import { PATTERN_SUSPENDED, suspendedFields } from "../../../src/pi/results/job-fields.ts";
import { SteppedClock } from "../../helpers/clock.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes, shutDownAfter } from "../../helpers/runtime.ts";

const refusal = (source: string, name?: string): string => {
  try {
    compileUntilPattern(source, name ? { name, untouched: "Nothing was started or written." } : undefined);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail(`${source} was accepted`);
};

describe("counted repeats that would leave the DFA are refused at arming", () => {
  it("(?i)error.{0,300}timeout: names `.{0,300}` and where it is, suggests .* or a smaller bound", () => {
    const message = refusal("(?i)error.{0,300}timeout");
    assert.match(message, /^until_pattern repeats `\.\{0,300\}` at character 10 up to 300 times after text it also matches/);
    assert.match(message, /Use `\.\*` or `\+`.*or counts adding up to at most 8\. Nothing was started or written\.$/);
  });

  it("a[ab]{490}[cd] names `[ab]{490}`; wake_on_pattern says its own name", () => {
    assert.match(refusal("a[ab]{490}[cd]", "wake_on_pattern"), /^wake_on_pattern repeats `\[ab\]\{490\}` at character 2 up to 490 times/);
  });

  it("like patterns: other wide repeats after text they match, groups that multiply, several small ones adding up", () => {
    assert.match(refusal("(?i)ERROR.{0,40}TIMEOUT"), /`\.\{0,40\}`/);
    assert.match(refusal("(?i)warn\\w{20}"), /`\\w\{20\}`/, "(?i): `W` is a word character");
    assert.match(refusal("fail(?:ed|ure).{0,100}retry"), /`\.\{0,100\}`/, "after a group: counted");
    assert.match(refusal("(?:x.){20}"), /`\(\?:x\.\)\{20\}` at character 1 up to 20 times/, "the group is named");
    assert.match(refusal("a.{7}b.{7}c"), /`\.\{7\}` at character 2 and `\.\{7\}` at character 7 up to 14 times in all/);
  });

  it("accepts the repeats that keep one live position: first in the pattern, after a character they exclude, of a literal", () => {
    for (const source of [
      "[0-9a-f]{40}",
      "commit [0-9a-f]{40}",
      "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}",
      "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
      "\\w{64}",
      "^.{0,300}$",
      "-{80}",
      "id=\\d{20}",
      "(?i)error.*timeout",
      "(?i)ready|listening on",
      "port (\\d{2,5})",
    ]) {
      assert.deepEqual(costlyRepeats(source), [], source);
      assert.doesNotThrow(() => compileUntilPattern(source), source);
    }
  });

  it(`accepts up to ${MAX_COUNTED_REPEAT} in all, refuses one more`, () => {
    assert.doesNotThrow(() => compileUntilPattern(`(?i)error.{0,${MAX_COUNTED_REPEAT}}timeout`));
    assert.doesNotThrow(() => compileUntilPattern(`a[ab]{${MAX_COUNTED_REPEAT}}[cd]`));
    assert.doesNotThrow(() => compileUntilPattern("a.{4}b.{4}c"));
    assert.match(refusal(`(?i)error.{0,${MAX_COUNTED_REPEAT + 1}}timeout`), new RegExp(`up to ${MAX_COUNTED_REPEAT + 1} times`));
    assert.match(refusal("a.{5}b.{5}c"), /up to 10 times in all/);
  });
});

/** A pattern whose every test costs `ms` on `clock` (the injected cost measure) and matches `hit`. */
function costly(clock: SteppedClock, ms: () => number, hit = /MATCH/): LinePattern & { tests: number } {
  return {
    source: "MATCH",
    tests: 0,
    test(line: string) {
      this.tests++;
      clock.advance(ms());
      return hit.test(line);
    },
    excerpt: (line: string) => line,
  };
}

/** What a line of `chars` characters may cost within the share. */
const share = (chars: number) => (chars * PATTERN_COST_MS) / PATTERN_COST_BYTES;

describe("the run-time budget of a pattern", () => {
  it("a pattern within its share runs for good; one over it spends the warm-up credit, then the debt, then stops once", () => {
    const clock = new SteppedClock();
    let spent = 0;
    const budget = new PatternBudget(
      () => clock.now(),
      () => spent++,
      () => clock.now(), // all of it CPU work
    );
    const line = "x".repeat(1_000);
    const fast = costly(clock, () => share(1_000) / 2);
    for (let i = 0; i < 10_000; i++) budget.test(fast, line);
    assert.equal(budget.spent, false);
    const slow = costly(clock, () => share(1_000) + 10);
    const calls = Math.floor((PATTERN_COST_WARMUP_MS + PATTERN_COST_DEBT_MS) / 10);
    for (let i = 0; i < calls; i++) budget.test(slow, line);
    assert.equal(budget.spent, false, "warm-up credit and debt not yet used up");
    budget.test(slow, line);
    assert.equal(budget.spent, true);
    assert.equal(spent, 1);
    const before = slow.tests;
    assert.equal(budget.test(slow, "MATCH"), false, "a spent budget runs nothing");
    assert.equal(slow.tests, before);
    assert.equal(spent, 1, "told once");
  });

  it("a pause of the machine is paid back by later fast lines and never suspends", () => {
    const clock = new SteppedClock();
    const budget = new PatternBudget(
      () => clock.now(),
      () => assert.fail("suspended"),
      () => clock.now(),
    );
    const line = "y".repeat(PATTERN_COST_BYTES / 16);
    let k = 0;
    // Every 64th line the thread is paused 50 ms (a busy machine); the other lines cost a tenth of their share.
    const bursty = costly(clock, () => (++k % 64 === 0 ? 50 : share(line.length) / 10));
    for (let i = 0; i < 64 * 50; i++) budget.test(bursty, line);
    assert.equal(budget.spent, false);
  });

  it("a debt the process did not compute (the machine did not run it) is forgiven: 200 ms pauses in a row never suspend", () => {
    const clock = new SteppedClock();
    let cpu = 0;
    const budget = new PatternBudget(
      () => clock.now(),
      () => assert.fail("suspended"),
      () => cpu,
    );
    const line = "z".repeat(1_000);
    const paused = costly(clock, () => {
      cpu += share(1_000) / 2; // the matching itself is cheap
      return 200; // but the wall clock saw the thread paused
    });
    for (let i = 0; i < 20; i++) budget.test(paused, line);
    assert.equal(budget.spent, false);
  });

  it("wake_on_pattern: a watch whose pattern is too slow stops, says so once, and tests nothing more", () => {
    const clock = new SteppedClock();
    const hits: PatternHit[] = [];
    let suspended = 0;
    const pattern = costly(clock, () => 5);
    const watch = new PatternWatch(pattern, {
      midLine: false,
      onHit: (hit) => hits.push(hit),
      clock,
      prefilter: false,
      onSuspend: () => suspended++,
      cpuMs: () => clock.now(),
    });
    const lines = Buffer.from("a line of ordinary output\n".repeat(200));
    watch.feed(lines, clock.now());
    assert.equal(suspended, 1);
    const tested = pattern.tests;
    assert.ok(tested < 200, `stopped within the read (${tested} tests)`);
    watch.feed(Buffer.from("MATCH\n"), clock.now());
    assert.equal(pattern.tests, tested, "nothing tested after");
    assert.deepEqual(hits, []);
    assert.equal(suspended, 1);
  });

  it("until_pattern: a call's wait whose pattern is too slow matches nothing more and says so once", () => {
    const clock = new SteppedClock();
    let suspended = 0;
    const pattern = costly(clock, () => 5);
    const watch = new CallWait({ pattern }, { clock, cpuMs: () => clock.now(), onSuspend: () => suspended++ });
    assert.equal(watch.feed(Buffer.from("ordinary line\n".repeat(200)), clock.now()), undefined);
    assert.equal(suspended, 1);
    assert.equal(watch.feed(Buffer.from("MATCH\n"), clock.now()), undefined, "no match after suspension");
    assert.equal(suspended, 1);
  });

  it("an accepted pattern on real output stays within its budget (the real clock)", () => {
    let suspended = 0;
    const watch = new CallWait({ pattern: compileUntilPattern(`a[ab]{${MAX_COUNTED_REPEAT}}[cd]`) }, { onSuspend: () => suspended++ });
    let seed = 1;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const line = () => Array.from({ length: 99 }, () => (random() < 0.5 ? "a" : "b")).join("");
    for (let i = 0; i < 200; i++) watch.feed(Buffer.from(`${Array.from({ length: 50 }, line).join("\n")}\n`), performance.now());
    assert.equal(suspended, 0);
  });
});

/** A pattern that really costs `ms` of this process's CPU per test (the runtime's clocks are the real ones). */
function busy(ms: number, hit = /MATCH/): LinePattern & { tests: number } {
  return {
    source: "(?i)line|match", // what the prefilter reads: every line of the job has these letters

    tests: 0,
    test(line: string) {
      this.tests++;
      const until = processCpuMs() + ms;
      while (processCpuMs() < until);
      return hit.test(line);
    },
    excerpt: (line: string) => line,
  };
}

describe("a suspended pattern through the runtime", () => {
  const keep = shutDownAfter();
  const exec = (cmd: string) => prepareExec({ cmd, yield_time_ms: 250 }, process.cwd(), process.env);
  const LINES = "sleep 0.5; for i in $(seq 1 2000); do echo line $i; done; echo MATCH; sleep 300";
  /** A job printing LINES with a costly wake_on_pattern armed on it (its runtime records wakes). */
  const armedJob = async () => {
    const made = runtimeWithWakes();
    keep(made.runtime);
    const id = runningId(await made.runtime.exec(exec(LINES)))!;
    const pattern = busy(3);
    assert.equal(made.runtime.setOnExit(id, { wakePattern: { regex: pattern, level: "wake" } }).found, true);
    return { made, id, pattern };
  };

  it("wake_on_pattern: disarmed, never wakes, and the job's next result says so once", async () => {
    const { made, id, pattern } = await armedJob();
    await waitFor(() => (made.runtime.jobs().find((job) => job.id === id)?.outputBytesTotal ?? 0) > 10_000, "the lines", 20_000);
    await waitFor(() => made.runtime.snapshotOf(id)?.wakePattern === undefined, "the pattern disarmed", 20_000);
    const tested = pattern.tests;
    assert.ok(tested < 2_000, `stopped early (${tested} tests)`);
    const first = await made.runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.deepEqual(first.patternsSuspended, ["wake_on_pattern"]);
    assert.deepEqual(suspendedFields(first.patternsSuspended, undefined), { wake_on_pattern: PATTERN_SUSPENDED });
    const second = await made.runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(second.patternsSuspended, undefined, "once");
    assert.deepEqual(
      made.batches.flatMap((batch) => batch.patterns ?? []),
      [],
      "no wake",
    );
  });

  it("wake_on_pattern while a call holds the job: the reads' matcher pays the same budget and stops with the wake", async () => {
    const { made, id, pattern } = await armedJob();
    // The call holds the job while every line arrives (it ends at the silence after them): only the read's matcher tests them.
    const held = await made.runtime.interact({ jobId: id, window: { ms: 30_000 }, until: { quietMs: 1_000 } });
    assert.ok(pattern.tests < 1_000, `stopped early (${pattern.tests} tests of 2 001 lines)`);
    assert.equal(made.runtime.snapshotOf(id)?.wakePattern, undefined, "disarmed");
    const told = [held, await made.runtime.interact({ jobId: id, window: { ms: 250 } })].map((report) => report.patternsSuspended);
    assert.deepEqual(told.flat().filter(Boolean), ["wake_on_pattern"], "told once");
    assert.deepEqual(
      made.batches.flatMap((batch) => batch.patterns ?? []),
      [],
      "no wake",
    );
  });

  it("until_pattern: stops matching; the wait runs to its window's end and its result says so", async () => {
    const made = runtimeWithWakes();
    keep(made.runtime);
    const id = runningId(await made.runtime.exec(exec(LINES)))!;
    const report = await made.runtime.interact({ jobId: id, window: { ms: 5_000 }, until: { pattern: busy(3) } });
    assert.deepEqual(report.patternsSuspended, ["until_pattern"]);
    assert.equal(report.matchedLine, undefined, "MATCH came after the suspension: not matched");
    assert.deepEqual(suspendedFields(report.patternsSuspended, "armed"), { wake_on_pattern: "armed", until_pattern: PATTERN_SUSPENDED });
  });
});
