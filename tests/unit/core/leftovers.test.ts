/**
 * The startup sweep with real processes and real directories: what a dead Pi process left is stopped
 * when it is provably still its own (never a process whose identity differs, never a group that took
 * a freed id later), once, with a notice; living runtimes and busy watchdogs are left alone; log
 * retention removes only old directories of dead runtimes that are provably ours.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { LogDirectory, logConfig } from "../../../src/core/log/job-log.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { WARM_SHELL_NAME } from "../../../src/core/shared/constants.ts";
import { leftoverNotice, retentionDays, sweepLeftovers } from "../../../src/core/supervision/leftovers.ts";
import { REGISTRY_FILE, REGISTRY_MAGIC } from "../../../src/core/supervision/watchdog-registry.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { groupMembers, otherStartThan, startTimeOf } from "../../helpers/process-identity.ts";
import { processAlive, waitFor } from "../../helpers/processes.ts";
import { logParents } from "../../helpers/runtime.ts";

/** Detached processes the tests start (each leads its own group), killed after the file's tests. */
const strays = new StartedJobs();
const logParent = logParents("piue-leftovers-");
const DAY_MS = 86_400_000;

const startTime = startTimeOf;
const POSIX_ONLY = process.platform === "win32" && "Windows has no watchdog, no registry and no sweep";
const HOST_GONE = `host ${process.pid} 1`; // our pid with another start time: a Pi process that is gone
const HOST_LIVING = `host ${process.pid} ${startTime(process.pid)}`;

/** A process leading its own session and group, as a job's leader does; its start time read at once. */
function detached(command: string): { child: ChildProcess; pid: number; start: string } {
  const child = spawn("/bin/sh", ["-c", command], { detached: true, stdio: "ignore" });
  child.unref();
  strays.group(child.pid!);
  return { child, pid: child.pid!, start: startTime(child.pid!) };
}

/** The one member of group `pgid` besides its (exited) leader. */
function memberOf(pgid: number): number {
  const member = groupMembers(pgid).find((pid) => pid !== pgid);
  assert.ok(member, `group ${pgid} has a member`);
  return member;
}

/** A runtime directory as mkdtemp makes it (0700), holding a registry with `lines`. */
function plant(parent: string, lines: string[] | undefined): string {
  const dir = mkdtempSync(join(parent, "pi-unified-exec-"));
  if (lines) writeFileSync(join(dir, REGISTRY_FILE), `${[REGISTRY_MAGIC, ...lines].join("\n")}\n`);
  writeFileSync(join(dir, "job-1-abcd.log"), "output\n");
  return dir;
}

function age(dir: string, days: number): void {
  const when = new Date(Date.now() - days * DAY_MS);
  for (const name of readdirSync(dir)) utimesSync(join(dir, name), when, when);
  utimesSync(dir, when, when);
}

/** A lingering group (its leader exited, one sleep lives on), with that sleep's pid and start time. */
async function lingeringGroup(): Promise<{ pgid: number; member: number; memberStart: number }> {
  const { child, pid } = detached("sleep 300 & exit 0");
  await waitFor(() => child.exitCode !== null, "the leader to exit");
  const member = memberOf(pid);
  return { pgid: pid, member, memberStart: process.platform === "linux" ? Number(startTime(member)) : 0 };
}

describe("startup sweep", { skip: POSIX_ONLY }, () => {
  it("stops the groups a dead Pi process left that are still its own, with TERM then KILL, once, and names them", async () => {
    const parent = logParent();
    const ours = detached("sleep 300");
    const stubborn = detached("trap '' TERM; sleep 300");
    const stranger = detached("sleep 300");
    const early = await lingeringGroup();
    const dir = plant(parent, [
      HOST_GONE,
      `watchdog 1 ${otherStartThan(startTime(1))}`, // pid 1 with another start time: a watchdog that is gone
      `+ ${ours.pid} ${ours.start} 100 sleep 300`,
      `+ ${stubborn.pid} ${stubborn.start} 100 trap '' TERM; sleep 300`,
      `+ ${stranger.pid} ${otherStartThan(stranger.start)} 100 not this one`,
      // Leader gone; its sleep started before the exit was recorded: the group never ended.
      `+ ${early.pgid} 1 100 sleep 300 & exit 0`,
      `x ${early.pgid} ${early.memberStart + 5}`,
    ]);
    const t0 = performance.now();
    const result = await sweepLeftovers(parent, 7);
    assert.ok(performance.now() - t0 < 3_500, "TERM, 1 s, KILL");
    assert.deepEqual(result.survivors, []);
    assert.equal(result.swept.length, 1);
    assert.deepEqual(result.swept[0]!.jobs.map((job) => job.pgid).sort(), [ours.pid, stubborn.pid, early.pgid].sort());
    assert.equal(result.swept[0]!.dir, dir);
    assert.equal(result.swept[0]!.hostPid, process.pid);
    for (const pid of [ours.pid, stubborn.pid, early.member]) assert.ok(!processAlive(pid), `${pid} was stopped`);
    assert.ok(processAlive(stranger.pid), "a live process with another start time is never signalled");
    const notice = leftoverNotice(result)!;
    assert.match(notice, /^stopped 3 jobs that an earlier Pi process \(pid \d+\) left running when it ended without shutting down: /);
    assert.ok(notice.includes(`\`sleep 300\` (process group ${ours.pid})`), notice);
    assert.ok(notice.includes(dir), notice);
    const again = await sweepLeftovers(parent, 7);
    assert.deepEqual(again.swept, [], "a runtime is swept once");
  });

  it(
    "Linux: never a group that took a freed id later (its members all started after the leader's recorded exit)",
    { skip: process.platform !== "linux" && "start-time ticks come from /proc" },
    async () => {
      const parent = logParent();
      const late = await lingeringGroup();
      plant(parent, [HOST_GONE, `+ ${late.pgid} 1 100 a reused id`, `x ${late.pgid} ${late.memberStart - 1}`]);
      const result = await sweepLeftovers(parent, 7);
      assert.deepEqual(result.swept, []);
      assert.ok(processAlive(late.member));
    },
  );

  it("leaves alone a runtime whose Pi process lives, and one whose watchdog is still at work", async () => {
    const parent = logParent();
    const living = detached("sleep 300");
    const fakeWatchdog = detached("sleep 300");
    const busy = detached("sleep 300");
    plant(parent, [HOST_LIVING, `+ ${living.pid} ${living.start} 100 sleep 300`]);
    plant(parent, [HOST_GONE, `watchdog ${fakeWatchdog.pid} ${fakeWatchdog.start}`, `+ ${busy.pid} ${busy.start} 100 sleep 300`]);
    const result = await sweepLeftovers(parent, 7);
    assert.deepEqual(result.swept, []);
    assert.ok(processAlive(living.pid) && processAlive(busy.pid));
  });

  it("stops an idle warm shell a dead Pi left like a job, but leaves it out of the notice", () => {
    const warm = { pgid: 4242, command: WARM_SHELL_NAME };
    const job = { pgid: 4343, command: "sleep 300" };
    assert.equal(leftoverNotice({ swept: [{ dir: "/tmp/x", hostPid: 1, jobs: [warm] }], survivors: [] }), undefined);
    const notice = leftoverNotice({ swept: [{ dir: "/tmp/x", hostPid: 1, jobs: [warm, job] }], survivors: [] })!;
    assert.match(notice, /^stopped 1 job that an earlier Pi process \(pid 1\) left running/);
    assert.doesNotMatch(notice, /warm-shell/);
  });

  it("a runtime says what its sweep stopped once, in the first result that asks", async () => {
    const parent = logParent();
    const left = detached("sleep 300");
    plant(parent, [HOST_GONE, `+ ${left.pid} ${left.start} 100 npm run dev`]);
    const runtime = new ExecRuntime({ logs: new LogDirectory({ ...logConfig(), parent }) });
    assert.equal(runtime.takeNotice(), undefined, "nothing is swept before the first job");
    const report = await runtime.exec(prepareExec({ cmd: "echo $$", yield_time_ms: 2_000 }, process.cwd(), process.env));
    assert.ok(report.job.exit);
    assert.ok(!processAlive(left.pid), "stopped before the first job ran");
    assert.match(runtime.takeNotice() ?? "", /stopped 1 job .*`npm run dev`/);
    assert.equal(runtime.takeNotice(), undefined, "said once");
    await runtime.exec(prepareExec({ cmd: "true" }, process.cwd(), process.env));
    assert.equal(runtime.takeNotice(), undefined);
    await runtime.shutdown();
  });
});

describe("log retention", { skip: POSIX_ONLY }, () => {
  it("removes old directories of dead runtimes only: never a living runtime's, one without a registry, a foreign mode, a symlink or a young one", async () => {
    const parent = logParent();
    const oldDead = plant(parent, [HOST_GONE]);
    const oldLiving = plant(parent, [HOST_LIVING]);
    const noRegistry = plant(parent, undefined);
    const foreignMode = plant(parent, [HOST_GONE]);
    chmodSync(foreignMode, 0o755);
    const youngDead = plant(parent, [HOST_GONE]);
    const elsewhere = logParent();
    const target = plant(elsewhere, [HOST_GONE]);
    const link = join(parent, "pi-unified-exec-Lnk123");
    symlinkSync(target, link);
    const badName = join(parent, "pi-unified-exec-toolong7");
    mkdirSync(badName, { mode: 0o700 });
    writeFileSync(join(badName, REGISTRY_FILE), `${REGISTRY_MAGIC}\n${HOST_GONE}\n`);
    for (const dir of [oldDead, oldLiving, noRegistry, foreignMode, target, badName]) age(dir, 8);
    age(youngDead, 6);
    const result = await sweepLeftovers(parent, 7);
    assert.deepEqual(await result.removed, [oldDead]);
    assert.ok(!existsSync(oldDead));
    for (const dir of [oldLiving, noRegistry, foreignMode, youngDead, link, target, badName]) assert.ok(existsSync(dir), `${dir} is kept`);
  });

  it("PI_UNIFIED_EXEC_LOG_RETENTION_DAYS: 0 keeps every directory, a number sets the days, anything else is the default 7", async () => {
    assert.equal(retentionDays({}), 7);
    assert.equal(retentionDays({ PI_UNIFIED_EXEC_LOG_RETENTION_DAYS: "0" }), 0);
    assert.equal(retentionDays({ PI_UNIFIED_EXEC_LOG_RETENTION_DAYS: " 30 " }), 30);
    for (const invalid of ["-1", "1.5", "seven", "", "1e3"])
      assert.equal(retentionDays({ PI_UNIFIED_EXEC_LOG_RETENTION_DAYS: invalid }), 7, invalid);
    const parent = logParent();
    const old = plant(parent, [HOST_GONE]);
    age(old, 400);
    assert.deepEqual(await (await sweepLeftovers(parent, 0)).removed, []);
    assert.ok(existsSync(old));
    assert.deepEqual(await (await sweepLeftovers(parent, 500)).removed, []);
    assert.deepEqual(await (await sweepLeftovers(parent, 300)).removed, [old]);
  });

  it("a runtime applies the retention at its first job, from the environment", async () => {
    const parent = logParent();
    const old = plant(parent, [HOST_GONE]);
    age(old, 3);
    const runtime = new ExecRuntime({ logs: new LogDirectory({ ...logConfig(), parent }) });
    // The runtime reads the retention from process.env; 2 days makes the 3-day-old directory expire.
    const saved = process.env.PI_UNIFIED_EXEC_LOG_RETENTION_DAYS;
    process.env.PI_UNIFIED_EXEC_LOG_RETENTION_DAYS = "2";
    try {
      await runtime.exec(prepareExec({ cmd: "true" }, process.cwd(), process.env));
    } finally {
      if (saved === undefined) delete process.env.PI_UNIFIED_EXEC_LOG_RETENTION_DAYS;
      else process.env.PI_UNIFIED_EXEC_LOG_RETENTION_DAYS = saved;
    }
    assert.deepEqual(await runtime.orphans.removed, [old]);
    await runtime.shutdown();
  });
});
