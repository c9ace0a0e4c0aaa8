/**
 * Warm shells on their own and in a runtime: nothing starts before the first command; a shell is
 * started off the call's path, leads its own session, is registered like a job, and is handed only a
 * job whose environment and shell match; every failure (a shell killed or stopped while idle, a
 * mismatch, a workdir it cannot enter) ends in a direct spawn and never in a lost job; repeated
 * failures stop the refills; shutdown stops the idle shell. Real shells; the watchdog is replaced by
 * a recording guard where a test needs to see registrations (the real one is the runtime's).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { LogDirectory } from "../../../src/core/log/job-log.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { REGISTRY_FILE } from "../../../src/core/supervision/watchdog-registry.ts";
import type { SpawnSpec } from "../../../src/core/transport/types.ts";
import { bashCarries, WarmShell, WarmShellUnsupported, warmTarget } from "../../../src/core/transport/warm-shell.ts";
import { WARM_SHELL_MAX_FAILURES, type WarmShells, warmShellsWanted } from "../../../src/core/transport/warm-shells.ts";
import { REPO_ROOT } from "../../helpers/hosts.ts";
import { rounds } from "../../helpers/load.ts";
import { startNodeHost } from "../../helpers/node-host.ts";
import { processAlive, quietFor, waitFor } from "../../helpers/processes.ts";
import { idleShell, pool, runHanded, spec } from "../../helpers/warm-shell-scenarios.ts";

/** The idle shell's control socket, through its private field: pausing it keeps the shell's answers unread. */
function controlOf(shells: WarmShells): { pause(): void; resume(): void } {
  return (shells as unknown as { shells: { control: { pause(): void; resume(): void } }[] }).shells[0]!.control;
}

/**
 * Starts the pool's next shell for `model`'s kind and catches it while it starts (checked every turn,
 * before it could have read its environment). Its answers are kept unread (its control socket, paused
 * through the private field) until the returned `resume`: it stays starting until then.
 */
async function startingShell(shells: WarmShells, model: SpawnSpec = spec("true")) {
  assert.equal(await shells.handOver(model, "bash"), undefined, "nothing idle yet: the first job spawns");
  shells.refill();
  const until = performance.now() + 15_000;
  while (shells.idle === undefined && performance.now() < until) await new Promise((resolve) => setImmediate(resolve));
  const control = controlOf(shells);
  control.pause();
  return { pid: shells.idle!.pid!, ready: shells.idle!.ready, resume: () => control.resume() };
}

/** A script in `dir` started as `<bash> --norc --noprofile -c <bootstrap> <name> <slot> <env>`: answers as bash 3.2 would. */
function oldBash(dir: string): string {
  const file = join(dir, "bash");
  writeFileSync(file, '#!/bin/sh\nprintf o >&"$6"\ncat <&"$6" >/dev/null\nexit 1\n', { mode: 0o755 });
  return file;
}

function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

function sessionAndGroup(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [Number(fields[3]), Number(fields[2])];
}

describe("warm shells", () => {
  it("are wanted unless PI_UNIFIED_EXEC_WARM_SHELL=0", () => {
    assert.equal(warmShellsWanted({}), true);
    assert.equal(warmShellsWanted({ PI_UNIFIED_EXEC_WARM_SHELL: "1" }), true);
    assert.equal(warmShellsWanted({ PI_UNIFIED_EXEC_WARM_SHELL: "0" }), false);
  });

  it("serve bash and sh pipe jobs only, with an absolute program path", () => {
    assert.ok(warmTarget(spec("true"), "bash"));
    assert.ok(warmTarget(spec("true", { file: "/bin/sh" }), "sh"));
    assert.equal(warmTarget(spec("true"), "zsh"), undefined);
    assert.equal(warmTarget(spec("true", { file: "bash" }), "bash"), undefined);
    assert.equal(warmTarget(spec("true", { file: "/opt/a=b/bash" }), "bash"), undefined);
    assert.equal(warmTarget(spec("true", { verbatim: true }), "bash"), undefined);
  });

  it("let bash export an environment itself only when every name and value survives it; env -i otherwise", () => {
    const plain = ["PATH=/usr/bin:/bin", "HOME=/root", "EMPTY=", "ODD= x\n\\y=\u0001", "_=/usr/bin/pi", "PWD=/w", "SHLVL=2", "LC_ALL=C"];
    assert.equal(bashCarries(plain), true);
    assert.equal(bashCarries([]), true);
    for (const entry of ["BASH_FUNC_f%%=() {  :\n}", "A.B=1", "1X=2", "x-y=3", "SHELLOPTS=hashall", "RANDOM=4", "UID=0", "e=1", "k=2"])
      assert.equal(bashCarries([...plain, entry]), false, entry);
    for (const level of ["", "01", "-1", "1000", " 2", "x"]) assert.equal(bashCarries([`SHLVL=${level}`]), false, `SHLVL=${level}`);
    for (const level of ["0", "1", "998"]) assert.equal(bashCarries([`SHLVL=${level}`]), true, `SHLVL=${level}`);
  });

  it("start nothing until a job asked, then one shell that leads its session and is registered", async () => {
    const { shells, guard } = pool();
    assert.equal(shells.idle, undefined);
    shells.refill();
    await quietFor(50);
    assert.equal(shells.idle, undefined, "no job yet: nothing to be warm for");
    const pid = await idleShell(shells);
    assert.deepEqual(sessionAndGroup(pid), [pid, pid]);
    assert.deepEqual(guard.events, [`started ${pid} pi-unified-exec-warm-shell`]);
  });

  it("hand a matching job to the idle shell: same pid, the job's output and exit", async () => {
    const { shells } = pool();
    const pid = await idleShell(shells);
    const job = spec("echo $$ $0; exit 3");
    const adopted = await shells.handOver(job, "bash");
    assert.ok(adopted);
    assert.equal(adopted.child.pid, pid);
    const result = await runHanded(job, adopted);
    assert.equal(result.text, `${pid} /bin/bash\n`);
    assert.deepEqual(result.exit, { code: 3, signal: null });
    assert.equal(shells.counts.handed, 1);
  });

  it("serve an sh job from a shell started for sh", async () => {
    const { shells } = pool();
    const model = spec("true", { file: "/bin/sh" });
    assert.equal(await shells.handOver(model, "sh"), undefined);
    shells.refill();
    await waitFor(() => shells.idle?.ready === true, "a ready warm shell", 15_000);
    const job = spec("echo $0", { file: "/bin/sh" });
    const adopted = await shells.handOver(job, "sh");
    assert.ok(adopted);
    assert.equal((await runHanded(job, adopted)).text, "/bin/sh\n");
  });

  it("discard a shell whose environment no longer matches; the job spawns directly", async () => {
    const { shells, guard } = pool();
    const pid = await idleShell(shells);
    const other = spec("true", { env: { PATH: process.env.PATH, SHLVL: "1", CHANGED: "1" } });
    assert.equal(await shells.handOver(other, "bash"), undefined);
    await waitFor(() => !processAlive(pid), "the discarded shell's end");
    await waitFor(() => guard.events.includes(`forgotten ${pid}`), "its registration forgotten");
    assert.equal(shells.idle, undefined);
    assert.equal(shells.counts.missed, 1);
  });

  it("fall back to a direct spawn when the idle shell was killed, and stop refilling after repeated failures", async () => {
    const { shells } = pool();
    for (let failure = 0; failure < WARM_SHELL_MAX_FAILURES; failure++) {
      shells.refill();
      await waitFor(() => shells.idle?.ready === true || failure === 0, "a ready warm shell", 15_000);
      const pid = failure === 0 ? await idleShell(shells) : shells.idle!.pid!;
      process.kill(pid, "SIGKILL");
      await waitFor(() => shells.idle === undefined, "the dead shell noticed");
      assert.equal(await shells.handOver(spec("true"), "bash"), undefined);
    }
    shells.refill();
    await quietFor(200);
    assert.equal(shells.idle, undefined, "no more shells after repeated failures");
  });

  it("hand a job to a shell still starting: the job waits for the rest of the start and runs once", async () => {
    const { shells } = pool();
    const { pid, ready, resume } = await startingShell(shells);
    assert.equal(ready, false);
    const job = spec("echo ran $$ $0");
    const taking = shells.handOver(job, "bash");
    resume();
    const adopted = await taking;
    assert.ok(adopted, "the starting shell took the job");
    assert.equal(adopted.child.pid, pid);
    assert.equal((await runHanded(job, adopted)).text, `ran ${pid} /bin/bash\n`);
    assert.deepEqual(shells.counts, { handed: 1, missed: 0, started: 1, fallbacks: 0 });
  });

  it("continue a shell that was stopped while idle, and hand it the job", async () => {
    const { shells } = pool();
    const pid = await idleShell(shells);
    process.kill(pid, "SIGSTOP");
    await waitFor(() => procState(pid) === "T", "the shell stopped");
    const job = spec("echo ran $$");
    const adopted = await shells.handOver(job, "bash");
    assert.ok(adopted, "the continued shell runs the job");
    assert.equal((await runHanded(job, adopted)).text, `ran ${pid}\n`);
    assert.deepEqual(shells.counts, { handed: 1, missed: 0, started: 1, fallbacks: 0 });
  });

  it("adopt a job whose exit came before the shell's answer, and never start it again", async () => {
    const { shells } = pool();
    const dir = mkdtempSync(join(tmpdir(), "piue-warm-once-"));
    try {
      const pid = await idleShell(shells);
      // The answer is held back (the idle shell's control socket, paused through its private field)
      // until the job has ended and Node has reaped it: its exit and closed pipes come first.
      const control = controlOf(shells);
      control.pause();
      const job = spec(`echo once >> ${join(dir, "ran")}; echo out; exit 7`);
      const taking = shells.handOver(job, "bash");
      // Gone from /proc: reaped, and Node reaps in the callback that emits the exit.
      await waitFor(() => procState(pid) === undefined, "the job's end, reaped");
      control.resume();
      const adopted = await taking;
      assert.ok(adopted, "the answer adopts the job");
      assert.notEqual(adopted.child.exitCode, null, "its exit was seen before the answer");
      const result = await runHanded(job, adopted);
      assert.deepEqual(result, { text: "out\n", exit: { code: 7, signal: null } });
      assert.equal(readFileSync(join(dir, "ran"), "utf8"), "once\n");
      assert.equal(shells.counts.fallbacks, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("throw a plain error for a shell that cannot be spawned, and let its late 'error' event pass", async () => {
    const target = { ...warmTarget(spec("true"), "bash")!, interpreter: "/nonexistent-dir-for-warm/bash" };
    const gone: unknown[] = [];
    assert.throws(
      () => new WarmShell(target, (shell) => gone.push(shell)),
      (error: Error) => !(error instanceof WarmShellUnsupported) && /could not be started/.test(error.message),
    );
    // Node emits the spawn's ENOENT on the next tick: handled, it crashes nothing.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(gone.length, 1);
  });

  it("give up at once on a bash too old for the bootstrap (its answer simulated: every bash here is new)", async () => {
    const { shells } = pool();
    const dir = mkdtempSync(join(tmpdir(), "piue-warm-old-"));
    try {
      const job = spec("true", { file: oldBash(dir) });
      assert.equal(await shells.handOver(job, "bash"), undefined);
      shells.refill();
      await waitFor(() => shells.counts.started === 1 && shells.idle === undefined, "the old bash's shell started and gone");
      assert.equal(await shells.handOver(job, "bash"), undefined);
      shells.refill();
      await quietFor(100);
      assert.equal(shells.counts.started, 1, "no second shell for a bash that cannot run the bootstrap");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("give up at once on a bash too old for the bootstrap that answers while it is handed a job", async () => {
    const { shells } = pool();
    const dir = mkdtempSync(join(tmpdir(), "piue-warm-old-"));
    try {
      const job = spec("true", { file: oldBash(dir) });
      // Its `o` is read only once the job was handed: the answer to the job is `o`.
      const { resume } = await startingShell(shells, job);
      const taking = shells.handOver(job, "bash");
      resume();
      assert.equal(await taking, undefined, "the job spawns directly");
      assert.equal(shells.counts.fallbacks, 1);
      shells.refill();
      await quietFor(100);
      assert.equal(shells.counts.started, 1, "no second shell for a bash that cannot run the bootstrap");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leave a workdir the shell cannot enter to the direct spawn, without counting a failure", async () => {
    const { shells } = pool();
    const pid = await idleShell(shells);
    assert.equal(await shells.handOver(spec("echo never", { cwd: "/nonexistent-dir-for-warm" }), "bash"), undefined);
    await waitFor(() => !processAlive(pid), "the shell's end");
    shells.refill();
    await waitFor(() => shells.idle?.ready === true, "the next shell", 15_000);
  });

  it("are stopped with their pool, and none starts afterwards", async () => {
    const { shells } = pool();
    const pid = await idleShell(shells);
    shells.shutdown();
    await waitFor(() => !processAlive(pid), "the idle shell's end");
    shells.refill();
    await quietFor(100);
    assert.equal(shells.idle, undefined);
  });

  it("in a runtime: none before the first command, one after it, none after shutdown", async () => {
    const logs = new LogDirectory();
    const runtime = new ExecRuntime({ logs, warmShells: true });
    assert.equal(runtime.warmShells.idle, undefined);
    await runtime.exec(prepareExec({ cmd: "true", yield_time_ms: 5_000 }, process.cwd(), process.env));
    await waitFor(() => runtime.warmShells.idle?.ready === true, "a ready warm shell", 15_000);
    const pid = runtime.warmShells.idle!.pid!;
    const registry = join(logs.path(), REGISTRY_FILE);
    await waitFor(
      () => new RegExp(`^\\+ ${pid} .*pi-unified-exec-warm-shell$`, "m").test(readFileSync(registry, "utf8")),
      "the idle shell in the watchdog's registry",
    );
    await runtime.shutdown();
    await waitFor(() => !processAlive(pid), "the idle shell stopped at shutdown");
  });

  it("in a runtime: calls at once leave as many shells for the next burst, each handed a job", async () => {
    const runtime = new ExecRuntime({ logs: new LogDirectory(), warmShells: true });
    try {
      const burst = () =>
        Promise.all(
          Array.from({ length: 4 }, () => runtime.exec(prepareExec({ cmd: "true", yield_time_ms: 2_000 }, process.cwd(), process.env))),
        );
      await burst();
      await waitFor(() => runtime.warmShells.idleCount >= 4, "four idle shells after a burst of four", 15_000);
      await waitFor(() => runtime.warmShells.idle?.ready === true, "the shells ready", 15_000);
      const before = runtime.warmShells.counts.handed;
      const reports = await burst();
      assert.deepEqual(
        reports.map((report) => report.job.exit?.exitCode),
        [0, 0, 0, 0],
      );
      assert.equal(runtime.warmShells.counts.handed - before, 4, JSON.stringify(runtime.warmShells.counts));
    } finally {
      await runtime.shutdown();
    }
  });

  it("in a runtime: after 30 s without a job the pool is back to one shell (the clock moved on, not waited for)", async () => {
    const runtime = new ExecRuntime({ logs: new LogDirectory(), warmShells: true });
    const realNow = performance.now.bind(performance);
    try {
      const exec = () => runtime.exec(prepareExec({ cmd: "true", yield_time_ms: 2_000 }, process.cwd(), process.env));
      await Promise.all(Array.from({ length: 4 }, exec));
      await waitFor(() => runtime.warmShells.idleCount >= 4, "four idle shells after a burst of four", 15_000);
      const shift = 31_000;
      performance.now = () => realNow() + shift;
      await exec();
      await waitFor(() => runtime.warmShells.idleCount === 1, "one idle shell after the quiet spell", 15_000);
    } finally {
      performance.now = realNow;
      await runtime.shutdown();
    }
  });

  it("in a runtime: two calls at once for the last free slot: one runs, the other is refused and never ran (3 rounds; 1 in the fast tier)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "puex-slot-"));
    const runtime = new ExecRuntime({ logs: new LogDirectory(), warmShells: true, capacity: 2 });
    try {
      const exec = (cmd: string) => runtime.exec(prepareExec({ cmd, yield_time_ms: 300 }, process.cwd(), process.env));
      await Promise.all([exec("true"), exec("true")]);
      await waitFor(() => runtime.warmShells.idleCount >= 2, "two idle shells", 15_000);
      await exec("sleep 100");
      for (let round = 0; round < rounds(3, 1); round++) {
        const results = await Promise.allSettled(["A", "B"].map((name) => exec(`echo ran > ${dir}/${name}${round}; sleep 100`)));
        const refused = results.filter((result) => result.status === "rejected");
        assert.equal(refused.length, 1, `round ${round}`);
        assert.match(String((refused[0] as PromiseRejectedResult).reason), /nothing was started/);
        await quietFor(200);
        assert.equal(readdirSync(dir).filter((file) => file.endsWith(String(round))).length, 1, "only the admitted command ran");
        const started = results.find((result) => result.status === "fulfilled") as PromiseFulfilledResult<{ job: { jobId: number } }>;
        await runtime.kill(started.value.job.jobId, "SIGKILL");
      }
    } finally {
      await runtime.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("in a runtime: a command too long to spawn is an error and adds no shell to the pool", async () => {
    const runtime = new ExecRuntime({ logs: new LogDirectory(), warmShells: true });
    try {
      const huge = `echo ${"x".repeat(300_000)}`;
      for (let i = 0; i < 3; i++) {
        await assert.rejects(runtime.exec(prepareExec({ cmd: huge, yield_time_ms: 250 }, process.cwd(), process.env)));
      }
      for (let i = 0; i < 3; i++) await runtime.exec(prepareExec({ cmd: "true", yield_time_ms: 2_000 }, process.cwd(), process.env));
      await waitFor(() => runtime.warmShells.idleCount >= 1, "the refilled shell", 15_000);
      await quietFor(300);
      assert.equal(runtime.warmShells.idleCount, 1, "calls one after another keep one shell");
    } finally {
      await runtime.shutdown();
    }
  });

  it(
    "in a runtime: a handed-over job's stdin is its pipe, so a read is input_wait: likely (20 hand-offs; 5 in the fast tier)",
    { skip: process.platform !== "linux" && "reads /proc" },
    async () => {
      const runtime = new ExecRuntime({ logs: new LogDirectory(), warmShells: true });
      try {
        const missed: number[] = [];
        const handOffs = rounds(20, 5);
        for (let round = 0; round < handOffs; round++) {
          // Whenever the shell is adopted, its fd 0 must already be the job's pipe, not the control socket.
          const report = await runtime.exec(prepareExec({ cmd: "read -r line", yield_time_ms: 600 }, process.cwd(), process.env));
          // On a busy machine the read may start after the window: then a listing must see it soon after.
          const likely = () => runtime.list().find((job) => job.jobId === report.job.jobId)?.inputWait?.likely === true;
          const seen =
            report.inputWait?.likely === true ||
            (await waitFor(likely, "the read", 10_000).then(
              () => true,
              () => false,
            ));
          if (!seen) missed.push(round);
          await runtime.kill(report.job.jobId, "SIGKILL");
        }
        assert.deepEqual(missed, [], "rounds whose read was not seen");
        assert.ok(runtime.warmShells.counts.handed >= handOffs / 2, JSON.stringify(runtime.warmShells.counts));
      } finally {
        await runtime.shutdown();
      }
    },
  );

  for (const how of ["alone", "with its watchdog"] as const) {
    it(`do not outlive a Pi process killed with SIGKILL (${how})`, async () => {
      const program = `
        import { prepareExec } from ${JSON.stringify(join(REPO_ROOT, "src/core/request/request.ts"))};
        import { ExecRuntime } from ${JSON.stringify(join(REPO_ROOT, "src/core/runtime.ts"))};
        const runtime = new ExecRuntime({ warmShells: true });
        await runtime.exec(prepareExec({ cmd: "true", yield_time_ms: 5000 }, process.cwd(), process.env));
        const started = performance.now();
        while (!runtime.warmShells.idle?.ready && performance.now() - started < 15000) await new Promise((r) => setTimeout(r, 20));
        console.log("warm " + runtime.warmShells.idle?.pid + " watchdog " + runtime.orphans.watchdog.pid);
        setInterval(() => {}, 1000);
      `;
      const { host, output } = startNodeHost(program);
      await waitFor(() => /^warm \d+ watchdog \d+$/m.test(output()), "the host's idle warm shell", 30_000);
      const [, warm, watchdog] = /^warm (\d+) watchdog (\d+)$/m.exec(output())!.map(Number);
      assert.ok(processAlive(warm!));
      if (how === "with its watchdog") process.kill(watchdog!, "SIGKILL");
      process.kill(host.pid!, "SIGKILL");
      await waitFor(() => !processAlive(warm!), "the warm shell's end", 3_000);
    });
  }
});
