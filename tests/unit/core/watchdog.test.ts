/**
 * The host-death watchdog with real processes: started lazily in its own session, deaf to hangups,
 * never inherited by a job, keeping the registry, stopping what is still ours when the host dies
 * (pipe, PTY, TERM-ignoring, lingering groups), never what is not, restarted when killed, dismissed
 * by an orderly shutdown. Host death here is the watchdog's pipe closing; a SIGKILLed host process
 * is in `tests/stress/watchdog.test.ts` (8 runs beside burners) and `tests/e2e/host-death.test.ts` (Pi).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { LogDirectory, logConfig } from "../../../src/core/log/job-log.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { WARM_SHELL_NAME } from "../../../src/core/shared/constants.ts";
import { Watchdog } from "../../../src/core/supervision/watchdog.ts";
import { parseRegistry, REGISTRY_FILE } from "../../../src/core/supervision/watchdog-registry.ts";
import { REPO_ROOT } from "../../helpers/hosts.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { groupMembers, groupOf, otherStartThan, sessionOf, startTimeOf } from "../../helpers/process-identity.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";
import { logParents } from "../../helpers/runtime.ts";

const SCRIPT = join(REPO_ROOT, "src", "core", "supervision", "watchdog.sh");
/** Detached processes the tests start (each leads its own group), killed after the file's tests. */
const strays = new StartedJobs();
const logParent = logParents("piue-watchdog-");

function runtimeIn(parent: string): ExecRuntime {
  return new ExecRuntime({ logs: new LogDirectory({ ...logConfig(), parent }) });
}

const startTime = startTimeOf;
const LINUX_ONLY = process.platform !== "linux" && "reads /proc";
/** A watchdog clock stamp in the registry: start-time ticks on Linux, "-" elsewhere. */
const STAMP = "(\\d+|-)";
/** A file's text, or "" while it does not exist yet. */
const textOf = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};

/** A process leading its own session and group, as a job's leader does. */
function detached(command: string): ChildProcess {
  const child = spawn("/bin/sh", ["-c", command], { detached: true, stdio: "ignore" });
  child.unref();
  strays.group(child.pid!);
  return child;
}

/** Linux: whether a process ignores SIGHUP and SIGINT (bits 1 and 2 of /proc/PID/status SigIgn). */
function ignoresHupAndInt(pid: number): boolean {
  const line = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return line !== null && (BigInt(`0x${line[1]}`) & 3n) === 3n;
}

function registryIn(parent: string) {
  const [dir] = readdirSync(parent).filter((name) => name.startsWith("pi-unified-exec-"));
  if (!dir) return undefined;
  try {
    return parseRegistry(readFileSync(join(parent, dir, REGISTRY_FILE), "utf8"));
  } catch {
    return undefined;
  }
}

const exec = (runtime: ExecRuntime, cmd: string, extra: { tty?: boolean; yield_time_ms?: number } = {}) =>
  runtime.exec(prepareExec({ cmd, yield_time_ms: 400, ...extra }, process.cwd(), process.env));

describe("watchdog", { skip: process.platform === "win32" && "Windows has no watchdog" }, () => {
  it("starts with a runtime's first job, not before, in its own session, and ignores hangups and Ctrl-C", async () => {
    const runtime = runtimeIn(logParent());
    assert.equal(runtime.orphans.watchdog.pid, undefined, "activation starts nothing");
    await exec(runtime, "true");
    const pid = runtime.orphans.watchdog.pid!;
    assert.ok(pid && processAlive(pid));
    assert.equal(groupOf(pid), pid, "it leads its own process group");
    if (process.platform === "linux") {
      assert.equal(sessionOf(pid), pid, "it leads its own session");
      // Its script ignores them from its first line; a signal sent before sh has read that line (the
      // first milliseconds) would still end it, and nothing but a direct kill reaches its own session.
      await waitFor(() => ignoresHupAndInt(pid), "the watchdog's trap of HUP and INT");
    }
    process.kill(pid, "SIGHUP");
    process.kill(pid, "SIGINT");
    await exec(runtime, "true");
    assert.ok(processAlive(pid), "HUP and INT are ignored");
    assert.equal(runtime.orphans.watchdog.pid, pid, "one watchdog serves every job");
    await runtime.shutdown();
    await waitFor(() => !processAlive(pid), "the watchdog to leave at shutdown");
  });

  it("no job inherits the host's end of the watchdog's pipe (pipe and PTY jobs)", { skip: LINUX_ONLY || SKIP_WITHOUT_PTY }, async () => {
    const runtime = runtimeIn(logParent());
    await exec(runtime, "true");
    // The host's end of the pipe, found through Node's handle: the one descriptor a job must never hold.
    const child = (runtime.orphans.watchdog as unknown as { child: ChildProcess }).child;
    const hostEnd = readlinkSync(`/proc/self/fd/${(child.stdin as unknown as { _handle: { fd: number } })._handle.fd}`);
    assert.match(hostEnd, /^(socket|pipe):\[\d+\]$/);
    const list = "for fd in /proc/self/fd/*; do readlink $fd; done";
    for (const tty of [false, true]) {
      // A window the exit ends: on a busy machine the listing can take longer than the default 400 ms.
      const report = await exec(runtime, list, { tty, yield_time_ms: 20_000 });
      assert.ok(report.job.exit, report.output.text);
      const held = report.output.text.replace(/\r/g, "").split("\n");
      assert.ok(held.length > 2, report.output.text);
      assert.ok(!held.includes(hostEnd), `a ${tty ? "PTY" : "pipe"} job holds ${hostEnd}: ${report.output.text}`);
    }
    await runtime.shutdown();
  });

  it(
    "the registry names the host, the watchdog and each group with its leader's start time; leader exits are marked and empty groups forgotten",
    { skip: SKIP_WITHOUT_PTY },
    async () => {
      const parent = logParent();
      const runtime = runtimeIn(parent);
      const pipe = await exec(runtime, "echo $$; sleep 30");
      const pty = await exec(runtime, "echo $$; sleep 30", { tty: true });
      const lingering = await exec(runtime, "echo $$; sleep 30 & exit 0");
      const [pipePid, ptyShell, lingerPid] = [pipe, pty, lingering].map((report) => pidsIn(report.output.text.replace(/\r/g, ""))[0]!);
      // A PTY job's group is its session's leader: the wrapper that runs the shell as its child.
      const ptyPid = sessionOf(ptyShell!)!;
      const registry = () => registryIn(parent)!;
      // An idle warm shell is registered too, under its own name: count the jobs.
      const jobGroups = () => registry().groups.filter((group) => group.command !== WARM_SHELL_NAME);
      await waitFor(() => jobGroups().length === 3, "three registrations");
      assert.deepEqual(registry().host, { pid: process.pid, start: startTime(process.pid) });
      assert.equal(registry().watchdog?.pid, runtime.orphans.watchdog.pid);
      const byPgid = new Map(registry().groups.map((group) => [group.pgid, group]));
      assert.equal(byPgid.get(pipePid)?.leaderStart, startTime(pipePid));
      assert.equal(byPgid.get(ptyPid)?.leaderStart, startTime(ptyPid));
      assert.equal(byPgid.get(pipePid)?.command, "echo $$; sleep 30");
      // Its shell exited within the window; the job runs on with its sleep, and the watchdog hears of the shell's exit.
      assert.deepEqual(lingering.job.shellExit, { code: 0, signal: null });
      await waitFor(
        () => new RegExp(`^x ${lingerPid} ${STAMP}$`, "m").test(textOf(join(parent, readdirSync(parent)[0]!, REGISTRY_FILE))),
        "the leader exit in the journal",
      );
      await runtime.kill(pipe.job.jobId, "SIGKILL");
      runtime.list(); // prunes: the killed job's group is proven empty
      await waitFor(() => !registry().groups.some((group) => group.pgid === pipePid), "the empty group to be forgotten");
      assert.match(readFileSync(join(parent, readdirSync(parent)[0]!, REGISTRY_FILE), "utf8"), new RegExp(`^- ${pipePid} ${STAMP}$`, "m"));
      assert.ok(registry().groups.some((group) => group.pgid === ptyPid));
      await runtime.shutdown();
    },
  );

  it("an orderly stop dismisses the watchdog without killing anything, and settles once it has exited", async () => {
    const parent = logParent();
    const watchdog = new Watchdog(() => join(parent, "registry"));
    const sleeper = detached("sleep 300");
    watchdog.register(sleeper.pid!, "sleep 300");
    const pid = watchdog.pid!;
    await waitFor(() => textOf(join(parent, "registry")).includes(`+ ${sleeper.pid} `), "the registration");
    await watchdog.stop();
    assert.ok(!processAlive(pid), "the watchdog has exited when stop() settles");
    assert.ok(processAlive(sleeper.pid!), "nothing was killed");
    assert.match(readFileSync(join(parent, "registry"), "utf8"), new RegExp(`^q ${STAMP}$`, "m"));
  });

  it(
    "a warm shell's new name and a leader's exit wait for calls to pause (or 1 s); a new group is told at once, a forgotten one's waiting lines dropped",
    { skip: LINUX_ONLY },
    async () => {
      const parent = logParent();
      // Stands in for /bin/sh: records every byte the host writes to the watchdog, in order.
      const recorder = join(parent, "recorder.sh");
      writeFileSync(recorder, '#!/bin/sh\nexec cat > "$2"\n', { mode: 0o755 });
      const heard = join(parent, "heard");
      const watchdog = new Watchdog(() => heard, process.platform, recorder);
      const [warm, other, sentinel, late] = [1, 2, 3, 4].map(() => detached("sleep 300").pid!);
      const start = startTime;
      const told = (pattern: string) => new RegExp(`^${pattern}$`, "m").test(textOf(heard));
      watchdog.register(warm!, WARM_SHELL_NAME);
      watchdog.register(other!, WARM_SHELL_NAME);
      await waitFor(() => told(`\\+ ${other} ${start(other!)} ${WARM_SHELL_NAME}`), "the warm shells, at once");
      // Each shell is handed a job: the same leader, a new name.
      watchdog.register(warm!, "the job");
      watchdog.leaderExited(warm!);
      watchdog.register(other!, "another job");
      watchdog.forget(other!);
      // A group the watchdog did not know is told at once; lines are written in order, so what waits is not before it.
      watchdog.register(sentinel!, "a direct spawn");
      await waitFor(() => told(`\\+ ${sentinel} ${start(sentinel!)} a direct spawn`), "a new group, at once");
      assert.ok(!told(`\\+ ${warm} .* the job`) && !told(`x ${warm}( \\d+)?`), `the rename and the exit wait: ${textOf(heard)}`);
      assert.ok(told(`- ${other}`), "a forgotten group is told at once");
      watchdog.flush();
      await waitFor(() => told(`\\+ ${warm} ${start(warm!)} the job`) && told(`x ${warm}( \\d+)?`), "the waiting lines after the flush");
      assert.ok(!textOf(heard).includes("another job"), "a forgotten group's waiting rename is dropped");
      // Without a pause of the calls, a waiting line goes out within WATCHDOG_DEFER_MS.
      watchdog.register(late!, WARM_SHELL_NAME);
      watchdog.register(late!, "a late job");
      await waitFor(() => told(`\\+ ${late} ${start(late!)} a late job`), "the rename, by the timer", 10_000);
      await watchdog.stop();
    },
  );

  it("a watchdog that cannot start costs nothing: registrations do not throw and the failure is noted", async () => {
    const watchdog = new Watchdog(() => undefined, process.platform, "/nonexistent/sh");
    assert.doesNotThrow(() => watchdog.register(process.pid, "x"));
    await waitFor(() => watchdog.failure !== undefined, "the failure to be noted");
    assert.doesNotThrow(() => {
      watchdog.leaderExited(process.pid);
      watchdog.register(process.pid + 1, "y");
      watchdog.forget(process.pid);
      watchdog.stop();
    });
  });

  it("a watchdog killed while jobs run is started again and learns every registered group, and when each leader exited", async () => {
    const parent = logParent();
    const runtime = runtimeIn(parent);
    const job = await exec(runtime, "sleep 30");
    const lingering = await exec(runtime, "echo $$; sleep 30 & exit 0");
    const lingerPid = pidsIn(lingering.output.text)[0]!;
    const exitLine = new RegExp(`^x ${lingerPid} ${STAMP}$`, "m");
    const registryFile = () => join(parent, readdirSync(parent)[0]!, REGISTRY_FILE);
    await waitFor(() => exitLine.test(textOf(registryFile())), "the leader exit in the journal");
    const exitStamp = exitLine.exec(textOf(registryFile()))![1]!;
    // Long enough that a replay stamped "now" would be told apart from the real moment of the exit.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const first = runtime.orphans.watchdog.pid!;
    process.kill(first, "SIGKILL");
    await waitFor(() => runtime.orphans.watchdog.pid !== undefined && runtime.orphans.watchdog.pid !== first, "a new watchdog");
    await waitFor(() => registryIn(parent)?.watchdog?.pid === runtime.orphans.watchdog.pid, "the new watchdog's registry");
    const pgid = runtime.jobs().find((candidate) => candidate.id === runningId(job))!.pid;
    await waitFor(() => registryIn(parent)!.groups.some((group) => group.pgid === pgid), "the replayed registration");
    await waitFor(() => exitLine.test(textOf(registryFile())), "the replayed leader exit");
    // Appended, not rewritten: had the host died before its replay, the first journal would still name the jobs.
    assert.ok(textOf(registryFile()).startsWith(`pi-unified-exec-registry 1\nhost ${process.pid} `));
    assert.match(textOf(registryFile()), new RegExp(`^watchdog ${first} [\\s\\S]*^watchdog ${runtime.orphans.watchdog.pid} `, "m"));
    if (process.platform === "linux") {
      const replayed = Number(exitLine.exec(textOf(registryFile()))![1]);
      // Start-time ticks (1/100 s): the replay knows the exit is 1.5 s old; a loaded machine may add some.
      assert.ok(Math.abs(replayed - Number(exitStamp)) <= 50, `replayed exit ${replayed}, first recorded ${exitStamp}`);
    }
    await runtime.shutdown();
  });

  it("at host death, stops only groups that are still ours: never a live process whose start time differs", async () => {
    const parent = logParent();
    const ours = detached("sleep 300");
    const stranger = detached("sleep 300");
    const lingering = detached("sleep 300 & echo started; exit 0");
    await waitFor(() => lingering.exitCode !== null, "the lingering group's leader to exit");
    const watchdog = spawn("/bin/sh", [SCRIPT, join(parent, "registry"), "1", "1"], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    strays.group(watchdog.pid!);
    watchdog.stdin!.write(`+ ${ours.pid} ${startTime(ours.pid!)} ours\n`);
    watchdog.stdin!.write(`+ ${stranger.pid} ${otherStartThan(startTime(stranger.pid!))} not ours\n`);
    // Registered after its leader exited ("-"): the group was whole when registered, so it is ours.
    watchdog.stdin!.write(`+ ${lingering.pid} - lingering\n`);
    const member = groupMembers(lingering.pid!).find((pid) => pid !== lingering.pid);
    assert.ok(member, "the lingering group has a member");
    await waitFor(() => textOf(join(parent, "registry")).includes("lingering"), "the registrations");
    watchdog.stdin!.end(); // the host is gone
    await waitFor(() => watchdog.exitCode !== null, "the watchdog to finish", 10_000);
    assert.ok(!processAlive(ours.pid!), "the same process is stopped");
    assert.ok(!processAlive(member), "the lingering group's member is stopped");
    assert.ok(processAlive(stranger.pid!), "a process with another start time is never signalled");
  });

  it(
    "at host death, what ignores TERM gets KILL a second of the clock later, however slow each wait and check is",
    { skip: LINUX_ONLY },
    async () => {
      const parent = logParent();
      const stubborn = detached("trap '' TERM; sleep 300");
      // Every `sleep` the watchdog runs takes 0.6 s, as a busy machine makes its 0.1 s sleeps and scans:
      // counted in rounds of ten, the grace would last over 6 s.
      const slow = mkdtempSync(join(parent, "slow-bin-"));
      writeFileSync(join(slow, "sleep"), "#!/bin/sh\nexec /bin/sleep 0.6\n");
      chmodSync(join(slow, "sleep"), 0o755);
      const watchdog = spawn("/bin/sh", [SCRIPT, join(parent, "registry"), "1", "1"], {
        stdio: ["pipe", "ignore", "ignore"],
        detached: true,
        env: { ...process.env, PATH: `${slow}:/usr/bin:/bin` },
      });
      strays.group(watchdog.pid!);
      watchdog.stdin!.write(`+ ${stubborn.pid} ${startTime(stubborn.pid!)} stubborn\n`);
      await waitFor(() => textOf(join(parent, "registry")).includes("stubborn"), "the registration");
      const hostGone = performance.now();
      watchdog.stdin!.end();
      await waitFor(() => !processAlive(stubborn.pid!), "the TERM-ignoring job to end", 10_000);
      const took = performance.now() - hostGone;
      assert.ok(took >= 900, `KILL after ${Math.round(took)} ms: the job was given its second after TERM`);
      assert.ok(took < 3_000, `KILL after ${Math.round(took)} ms`);
      await waitFor(() => watchdog.exitCode !== null, "the watchdog to finish", 10_000);
    },
  );
});
