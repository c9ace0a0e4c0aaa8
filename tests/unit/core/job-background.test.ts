/**
 * A shell that exits while processes of its job still run keeps the job (issue 37): the job's state
 * machine with real processes on pipes and PTYs — what holds a job (the shell's group; a PTY's
 * session) and what does not (a process that left with setsid, a job-control group of its own on
 * pipes), what a wait says when it sees the shell exit, the exit code the job ends with, its output
 * after the shell's exit, its deadline and kill — and the runtime's calls (repeated beside CPU burners in
 * `tests/stress/background.test.ts`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Job } from "../../../src/core/job/job.ts";
import { BACKGROUND_SETTLE_MS } from "../../../src/core/job/job-ending.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { backgroundEndingAtSettle, backgroundEndsAfterTheCall, quickAndKeptBackgrounds } from "../../helpers/background-calls.ts";
import { escapedDaemonThenExit, nodeResetThenShellExits, StartedJobs, statusOf, untilExit } from "../../helpers/jobs.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";

const jobs = new StartedJobs();
const start = (command: string, options: Parameters<StartedJobs["start"]>[1] = {}) => jobs.start(command, options);
const text = (job: Job) => job.takeOutput().text;

/** Waits until the job's shell has exited (the job may run on). */
const untilShellExit = (job: Job) => waitFor(() => job.leaderExited, "the shell's exit", 20_000);

describe("a job whose shell exits while processes of it run on", () => {
  it("runs on while a background process holds the pipe, names it, and ends with it, with the shell's exit code", async () => {
    const job = start("sleep 0.8 & echo $!; exit 4");
    await untilShellExit(job);
    assert.equal(statusOf(job), "running", "the job runs on");
    // Until the shell's fork has become `sleep`, its command line is the shell's.
    await waitFor(() => job.backgroundNow()?.processes.named[0]?.command === "sleep 0.8", "the sleep");
    const now = job.backgroundNow();
    assert.deepEqual(now?.shellExit, { code: 4, signal: null });
    const [sleeper] = pidsIn(text(job));
    assert.deepEqual(now?.processes.pids, [sleeper]);
    assert.deepEqual(now?.processes.named, [{ pid: sleeper, command: "sleep 0.8" }]);
    assert.equal(await untilExit(job), "exited");
    assert.deepEqual(job.exit, { exitCode: 4, signal: null });
    assert.equal(job.backgroundNow(), undefined);
  });

  it("runs on while a background process with its output sent to /dev/null lives, and ends soon after it", async () => {
    const job = start("sleep 0.8 > /dev/null 2>&1 & exit 0");
    await untilShellExit(job);
    const shellGone = performance.now();
    assert.equal(statusOf(job), "running");
    await untilExit(job);
    const after = performance.now() - shellGone;
    assert.ok(after > 500 && after < 5_000, `ended ${after} ms after the shell: with the sleep, not with its streams`);
    assert.equal(job.exit?.exitCode, 0);
  });

  it("reads what a background process prints after the shell's exit", async () => {
    const job = start("(sleep 0.3; echo late) & echo early");
    await untilExit(job);
    assert.equal(text(job), "early\nlate\n");
    assert.equal(job.exit?.exitCode, 0);
  });

  it("is not held by a process that left with setsid: the job ends with its shell", async () => {
    const job = start(escapedDaemonThenExit());
    const t0 = performance.now();
    await untilExit(job);
    const [daemon] = pidsIn(text(job));
    assert.ok(daemon, "the daemon printed its pid");
    jobs.pid(daemon);
    assert.ok(performance.now() - t0 < 5_000);
    assert.ok(processAlive(daemon), "the daemon lives on outside the job");
  });

  it("on pipes is not held by a job-control group of its own (set -m): only the shell's group holds the job", async () => {
    const job = start("set -m; sleep 30 & echo $!; exit 0");
    await untilExit(job);
    const [sleeper] = pidsIn(text(job));
    assert.ok(sleeper && processAlive(sleeper), "the sleep lingers in a group of its own");
    jobs.pid(sleeper);
  });

  it("a wait that sees the shell exit ends `background` after the settle window; the next wait is a plain wait", async () => {
    const job = start("sleep 30 & exit 0");
    const t0 = performance.now();
    const end = await job.wait(performance.now() + 20_000);
    const took = performance.now() - t0;
    assert.equal(end, "background");
    assert.ok(took >= BACKGROUND_SETTLE_MS - 50 && took < 10_000, `took ${took} ms`);
    const second = await job.wait(performance.now() + 400);
    assert.equal(second, "deadline", "a later wait on the job waits out its window");
    await job.terminate("SIGTERM", "killed");
  });

  it("kill stops what the shell left, confirmed, and the job ends by the kill's signal, not with the shell's code", async () => {
    const job = start("sleep 30 & echo $!; exit 2");
    await untilShellExit(job);
    const [sleeper] = pidsIn(text(job));
    const termination = await job.terminate("SIGTERM", "killed");
    assert.equal(termination.cleanup, "confirmed");
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "killed" });
    assert.ok(!processAlive(sleeper!));
  });

  it("its deadline stops what the shell left, as `timeout`, by SIGTERM", async () => {
    const job = start("sleep 30 & exit 0", { timeoutMs: 1_500 });
    await untilExit(job);
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM", stoppedBy: "timeout" });
  });

  for (const [what, command] of [
    ["`nohup … &` as its last statement", "nohup sleep 30 > /dev/null 2>&1 &"],
    ["a plain `&`", "sleep 30 & exit 0"],
    ["a plain `&` writing to the terminal", "(sleep 0.5; echo late; exec sleep 30) &"],
  ])
    it(
      `on a PTY, ${what} keeps the job as on pipes: the terminal's hangup at the shell's exit ends nothing`,
      { skip: process.platform === "win32" },
      async () => {
        const job = start(command, { terminal: { cols: 80, rows: 24 } });
        await untilShellExit(job);
        assert.equal(await job.wait(performance.now() + 20_000), "background", "the job runs on past the settle window");
        await waitFor(() => job.backgroundNow()?.processes.named[0]?.command === "sleep 30", "the sleep");
        if (command.includes("late")) await waitFor(() => job.previewText().includes("late"), "its output after the shell's exit");
        await job.terminate("SIGTERM", "killed");
        assert.equal(job.exit?.signal, "SIGTERM");
      },
    );

  it(
    "on a PTY, Node started with `nohup … &` keeps the job though it resets SIGHUP as it starts: the shell exits once it runs (forced)",
    { skip: process.platform === "win32" },
    async () => {
      const job = start(nodeResetThenShellExits(), { terminal: { cols: 80, rows: 24 } });
      await untilShellExit(job);
      assert.equal(await job.wait(performance.now() + 20_000), "background", `the job runs on: ${JSON.stringify(job.exit)}`);
      await job.terminate("SIGTERM", "killed");
      assert.equal(job.exit?.signal, "SIGTERM");
    },
  );

  it("on a PTY, a process that left with setsid does not hold the job, as on pipes", { skip: process.platform === "win32" }, async () => {
    const job = start(escapedDaemonThenExit(), { terminal: { cols: 80, rows: 24 } });
    assert.equal(await untilExit(job), "exited");
    const [daemon] = pidsIn(text(job));
    assert.ok(daemon, "the daemon printed its pid");
    jobs.pid(daemon);
    assert.ok(processAlive(daemon), "the daemon lives on outside the job");
  });

  it("withholds the command lines once a person typed into the job: they may hold what was typed", async () => {
    const job = start("read line; sleep 30 & exit 0");
    const typing = job.startTyping("next-result")!;
    await typing.type(Buffer.from("secret-typed\n"));
    typing.end();
    await untilShellExit(job);
    const named = job.backgroundNow()?.processes.named;
    assert.equal(named?.length, 1);
    assert.equal(named?.[0]?.command, undefined);
    await job.terminate("SIGKILL", "killed");
  });
});

describe("a background that ends as the settle window ends", () => {
  it("is the job's end, reported by the call that saw the shell exit: exit_code, no background line", async () => {
    const runtime = new ExecRuntime();
    try {
      await backgroundEndingAtSettle(runtime);
    } finally {
      await runtime.shutdown();
    }
  });
});

describe("the runtime's calls on a shell that leaves processes running", () => {
  it("`sleep 0.4 & echo hi` ends in its call, and a server-like background returns running", async () => {
    const runtime = new ExecRuntime();
    try {
      await quickAndKeptBackgrounds(runtime);
    } finally {
      await runtime.shutdown();
    }
  });

  it("a background process that ends after the call ends the job once: the next poll reports it", async () => {
    const runtime = new ExecRuntime();
    try {
      await backgroundEndsAfterTheCall(runtime);
    } finally {
      await runtime.shutdown();
    }
  });
});
