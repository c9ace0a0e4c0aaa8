/**
 * A shell that exits leaving processes running, beside two CPU burners, 20 runs each: a background
 * whose last process ends right at the settle window (forced) is the job's end, reported by that
 * call; and `sleep N & echo` with N around the settle window (not forced) always gives a report that
 * agrees with itself: the exit, or a running job with its shell's code and what runs on. On a PTY,
 * `nohup … &` as the command's last statement (Node's too), and a plain `&`, keep the job every time. And the
 * runtime's calls of `tests/helpers/background-calls.ts`, which `tests/unit/core/job-background.test.ts`
 * runs once: a quick and a kept background (6 runs), a background ending after the call (4 runs).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { backgroundEndingAtSettle, backgroundEndsAfterTheCall, quickAndKeptBackgrounds } from "../helpers/background-calls.ts";
import { nodeResetThenShellExits } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";

const RUNS = 20;

describe("a background that ends at the settle window, beside two burners", () => {
  it("ended right at the settle (forced): the call reports the job's end, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < RUNS; run++) await backgroundEndingAtSettle(runtime, `run ${run}`);
    } finally {
      stop();
      await runtime.shutdown();
    }
  });

  it("`sleep N & echo` with N around the settle: the exit, or running with the shell's code and what runs on, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < RUNS; run++) {
        const seconds = (0.96 + run * 0.006).toFixed(3);
        const label = `run ${run} (sleep ${seconds})`;
        const report = await runtime.exec(
          prepareExec({ cmd: `sleep ${seconds} & echo started`, yield_time_ms: 10_000 }, process.cwd(), process.env),
        );
        assert.equal(report.output.text, "started\n", label);
        if (report.job.exit) {
          assert.equal(report.waitEnd, "exited", label);
          assert.deepEqual(report.job.exit, { exitCode: 0, signal: null }, label);
          assert.equal(report.job.background, undefined, label);
          continue;
        }
        assert.equal(report.waitEnd, "background", label);
        assert.deepEqual(report.job.shellExit, { code: 0, signal: null }, label);
        assert.ok((report.job.background?.pids.length ?? 0) > 0, `${label}: ${JSON.stringify(report.job.background)}`);
        assert.equal(report.backgroundChanged, true, label);
        const ended = await runtime.interact({ jobId: report.job.jobId, window: { ms: 10_000 } });
        assert.deepEqual(ended.job.exit, { exitCode: 0, signal: null }, label);
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });
});

describe("a PTY command whose last statement starts a background, beside two burners", { skip: process.platform === "win32" }, () => {
  // Node resets SIGHUP as it starts: as the very last statement it raced the terminal's hangup; the
  // forced form lets it reset first, every time.
  const node = `'${process.execPath}' -e 'setInterval(() => {}, 1000)'`;
  for (const [what, command] of [
    ["`nohup sleep 300 > /dev/null 2>&1 &`", "nohup sleep 300 > /dev/null 2>&1 &"],
    ["`sleep 300 &`", "sleep 300 &"],
    ["`nohup node … > /dev/null 2>&1 &`", `nohup ${node} > /dev/null 2>&1 &`],
    ["Node that reset SIGHUP before the shell's exit (forced)", nodeResetThenShellExits()],
  ])
    it(`${what} keeps the job, 20 runs beside two burners`, async () => {
      const stop = startBurners(2);
      const runtime = new ExecRuntime();
      try {
        for (let run = 0; run < RUNS; run++) {
          const report = await runtime.exec(prepareExec({ cmd: command, tty: true, yield_time_ms: 10_000 }, process.cwd(), process.env));
          assert.equal(report.waitEnd, "background", `run ${run}: ${JSON.stringify(report.job.exit)}`);
          assert.deepEqual(report.job.shellExit, { code: 0, signal: null }, `run ${run}`);
          assert.equal(report.job.background?.pids.length, 1, `run ${run}`);
          const killed = await runtime.kill(report.job.jobId, "SIGTERM");
          assert.equal(killed.job.exit?.signal, "SIGTERM", `run ${run}`);
        }
      } finally {
        stop();
        await runtime.shutdown();
      }
    });
});

describe("the runtime's calls on a shell that leaves processes running, beside CPU burners", () => {
  it("`sleep 0.4 & echo hi` ends in its call, and a server-like background returns running, 6 runs (burners)", async () => {
    const stopBurners = startBurners();
    const runtime = new ExecRuntime();
    try {
      await runtime.exec(prepareExec({ cmd: "true" }, process.cwd(), process.env));
      for (let run = 0; run < 6; run++) await quickAndKeptBackgrounds(runtime, run);
    } finally {
      stopBurners();
      await runtime.shutdown();
    }
  });

  it("a background process that ends after the call ends the job once: the next poll reports it, 4 runs (burners)", async () => {
    const stopBurners = startBurners();
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < 4; run++) await backgroundEndsAfterTheCall(runtime, run);
    } finally {
      stopBurners();
      await runtime.shutdown();
    }
  });
});
