/**
 * macOS's port scans ask `lsof`, which takes tens to hundreds of milliseconds there and blocks Pi's
 * loop. We cannot run macOS here, so these tests run the macOS path (platform "darwin") with a mocked
 * `lsof` that answers for a real process of a job and moves a test clock by what it "costs":
 * an `until_listening` wait checking every 100 ms runs it at most once a second, a slow one less
 * often still (its cost at most a tenth of the time), one at a time, and a failing one no more often.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { type ListenerJob, ListeningPorts } from "../../../src/core/processes/listening.ts";
import { LSOF_COST_SHARE, LSOF_MIN_INTERVAL_MS, LsofProbe } from "../../../src/core/processes/socket-tables.ts";
import { ListenWatch } from "../../../src/core/wait/listen-watch.ts";

/** A fake clock for the watch's timers: `advance` fires what falls due, in order. */
function testClock() {
  let now = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  return {
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (id: unknown) => void timers.delete(id as number),
    /** Moves time without firing timers (what a run of lsof costs). */
    spend: (ms: number) => {
      now += ms;
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...timers].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = Math.max(now, end);
    },
  };
}

describe("macOS port scans with a mocked lsof", { skip: process.platform === "win32" && "needs a POSIX process table" }, () => {
  let child: ChildProcess;
  let job: ListenerJob;
  before(() => {
    // The job: a process leading its own session and group, as a job's leader does.
    child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    job = { jobId: 1, leader: child.pid!, groups: [child.pid!] };
  });
  after(() => child.kill("SIGKILL"));

  /** A mocked lsof listing `address` for the job's process once `bound` is true; each run costs `costMs` of test time. */
  function mockedLsof(clock: ReturnType<typeof testClock>, costMs: number, state: { bound: boolean; fail?: boolean }) {
    const probe = new LsofProbe(() => {
      clock.spend(costMs);
      if (state.fail) return undefined;
      return state.bound ? `p${child.pid}\nn127.0.0.1:8765\np1\nn*:22\n` : "p1\nn*:22\n";
    }, clock.now);
    return new ListeningPorts("none:", "darwin", clock.now, probe);
  }

  it("with a mocked lsof, until_listening's checks every 100 ms run lsof at most once a second and see the bind within a second", () => {
    const clock = testClock();
    const state = { bound: false };
    const ports = mockedLsof(clock, 20, state);
    let met: string | undefined;
    let metAt = 0;
    const watch = new ListenWatch(
      { kind: "new" },
      () => ports.scan([job])?.get(job.jobId),
      (address) => {
        met = address;
        metAt = clock.now();
      },
      clock,
      100,
    );
    watch.start();
    clock.advance(5_000);
    const runsBefore = probeRuns(ports);
    assert.ok(runsBefore <= 6, `${runsBefore} runs of lsof in 5 s`);
    assert.equal(met, undefined);
    state.bound = true;
    const boundAt = clock.now();
    clock.advance(3_000);
    assert.equal(met, "127.0.0.1:8765");
    assert.ok(metAt - boundAt <= LSOF_MIN_INTERVAL_MS + 200, `seen ${metAt - boundAt} ms after the bind`);
  });

  it("with a mocked lsof that takes 400 ms, it runs again only after 4 s (its cost a tenth of the time at most)", () => {
    const clock = testClock();
    const ports = mockedLsof(clock, 400, { bound: true });
    const runs: number[] = [];
    for (let t = 0; t < 20_000; t += 100) {
      const before = probeRuns(ports);
      assert.deepEqual(ports.scan([job])?.get(job.jobId), ["127.0.0.1:8765"], "every scan answers, from the latest run");
      if (probeRuns(ports) > before) runs.push(clock.now());
      clock.advance(100);
    }
    for (let i = 1; i < runs.length; i++) assert.ok(runs[i]! - runs[i - 1]! >= 400 / LSOF_COST_SHARE, `runs at ${runs.join(", ")}`);
    assert.ok(runs.length >= 4 && runs.length <= 5, `${runs.length} runs in 20 s`);
  });

  it("with a mocked lsof, one run at a time: a scan during a run answers from the previous run without a second lsof", () => {
    const clock = testClock();
    let inner: Map<number, string[]> | undefined;
    let ports: ListeningPorts | undefined;
    let calls = 0;
    const probe = new LsofProbe(() => {
      calls++;
      // A scan that comes while lsof runs (another runtime's, a re-entered loop) does not start another.
      if (calls === 2) inner = ports!.scan([job]);
      return `p${child.pid}\nn127.0.0.1:${8000 + calls}\n`;
    }, clock.now);
    ports = new ListeningPorts("none:", "darwin", clock.now, probe);
    ports.scan([job]);
    clock.advance(LSOF_MIN_INTERVAL_MS);
    const outer = ports.scan([job]);
    assert.equal(calls, 2);
    assert.deepEqual(inner?.get(job.jobId), ["127.0.0.1:8001"], "the previous run's answer");
    assert.deepEqual(outer?.get(job.jobId), ["127.0.0.1:8002"]);
  });

  it("with a mocked lsof that fails, it is asked no more often than one that answers", () => {
    const clock = testClock();
    const state = { bound: false, fail: true };
    const ports = mockedLsof(clock, 10, state);
    for (let t = 0; t < 3_000; t += 100) {
      assert.equal(ports.scan([job]), undefined);
      clock.advance(100);
    }
    assert.ok(probeRuns(ports) <= 4, `${probeRuns(ports)} runs in 3 s`);
  });
});

/** How many times the probe behind `ports` ran lsof. */
function probeRuns(ports: ListeningPorts): number {
  return (ports as unknown as { lsof: LsofProbe }).lsof.runs;
}
