/**
 * No job outlives the Pi process, through the real CLI: on every host, an RPC Pi whose stdin closes
 * with a SIGTERM at once, the same watchdog across /reload, and the shutdown grace held against a
 * SIGTERM (Pi's own signal handling and reload); on the newest host, a SIGKILLed Pi (pipe, PTY,
 * TERM-ignoring and backgrounded jobs) and a Pi killed together with its watchdog (the next Pi
 * sweeps what it left, says so once, and applies log retention).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { descendantsOf } from "../../src/core/processes/process-table.ts";
import { WARM_SHELL_NAME } from "../../src/core/shared/constants.ts";
import { parseRegistry, REGISTRY_FILE, REGISTRY_MAGIC, type Registry } from "../../src/core/supervision/watchdog-registry.ts";
import { headerOf, outputOf, type Run } from "../helpers/events.ts";
import { EXTENSION_ENTRY, NEWEST_HOST, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");
const parents: string[] = [];
const strays: number[] = [];

after(() => {
  for (const pid of strays) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const parent of parents) rmSync(parent, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

/** A log parent of the test's own, so Pi's private log directory (and its registry) can be found. */
function logParent(): string {
  const parent = mkdtempSync(join(tmpdir(), "piue-host-death-"));
  parents.push(parent);
  return parent;
}

function startPi(host: (typeof PI_HOSTS)[number], parent: string, extensions: string[] = [EXTENSION_ENTRY]): Promise<PiRpcHost> {
  return PiRpcHost.start(host, { extensions, env: { PI_UNIFIED_EXEC_LOG_DIR: parent } });
}

/** The registry of the one runtime directory under `parent` that has one (undefined until written). */
function registryIn(parent: string, except: readonly string[] = []): Registry | undefined {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith("pi-unified-exec-") || except.includes(name)) continue;
    try {
      const registry = parseRegistry(readFileSync(join(parent, name, REGISTRY_FILE), "utf8"));
      if (registry) return registry;
    } catch {
      // no registry in this one (yet)
    }
  }
  return undefined;
}

/** The registry's job groups: an idle warm shell is registered too (it must not outlive Pi either). */
function jobGroups(parent: string) {
  return registryIn(parent)?.groups.filter((group) => group.command !== WARM_SHELL_NAME);
}

/** Pids a run's jobs printed, with every descendant they have now. */
function jobProcesses(run: Run): number[] {
  const printed = run.tools.flatMap((tool) => pidsIn(outputOf(tool.text).replace(/\r/g, "")));
  strays.push(...printed);
  return [...new Set([...printed, ...printed.flatMap((pid) => descendantsOf(pid))])];
}

/** Each job's call returns once it printed its pid line: a fixed 500 ms window missed it on a busy machine. */
const PID_PRINTED = { yield_time_ms: 10_000, until_pattern: "^[0-9]+$" };

const FOUR_JOBS = steps(
  callAll(
    ["exec_command", { cmd: "echo $$; sleep 300", ...PID_PRINTED }],
    ["exec_command", { cmd: "echo $$; sleep 300", tty: true, ...PID_PRINTED }],
    ["exec_command", { cmd: "echo $$; trap '' TERM; sleep 300", ...PID_PRINTED }],
    ["exec_command", { cmd: "sleep 300 & echo $!; wait", ...PID_PRINTED }],
  ),
  say("started"),
);

async function allEndWithin(pids: readonly number[], ms: number, what: string): Promise<void> {
  const t0 = performance.now();
  await waitFor(() => pids.every((pid) => !processAlive(pid)), what, ms);
  assert.ok(performance.now() - t0 <= ms);
}

for (const host of PI_HOSTS) {
  describe(
    `host death on ${host.name}`,
    { skip: process.platform === "win32" && "Windows has no watchdog (docs/reference.md says what covers it)" },
    () => {
      // The watchdog does not depend on the host (8 runs beside burners: tests/stress/watchdog.test.ts).
      if (host === NEWEST_HOST) {
        it(
          "SIGKILL of Pi while a pipe, a PTY, a TERM-ignoring and a backgrounded job run: none is alive 3 s later",
          { skip: SKIP_WITHOUT_PTY },
          async () => {
            const pi = await startPi(host, logParent());
            try {
              const processes = jobProcesses(await pi.run("start jobs", FOUR_JOBS));
              assert.ok(processes.length >= 4 && processes.every(processAlive), "the jobs run");
              process.kill(pi.pid, "SIGKILL");
              await allEndWithin(processes, 3_000, "every job process to end after Pi was SIGKILLed");
            } finally {
              await pi.close();
            }
          },
        );
      }

      it("RPC stdin closed and SIGTERM at once: none is alive 3 s later", { skip: SKIP_WITHOUT_PTY }, async () => {
        const pi = await startPi(host, logParent());
        const processes = jobProcesses(await pi.run("start jobs", FOUR_JOBS));
        assert.ok(processes.every(processAlive), "the jobs run");
        const closing = pi.close();
        process.kill(pi.pid, "SIGTERM");
        await allEndWithin(processes, 3_000, "every job process to end after stdin closed with a SIGTERM");
        await closing;
      });

      // The sweep is the runtime's (unit: leftovers); its Pi path once, on the newest host.
      if (host === NEWEST_HOST) {
        it("a Pi killed together with its watchdog: the next Pi stops what it left before its first job, says so once, and applies the retention", async () => {
          const parent = logParent();
          const first = await startPi(host, parent);
          const run = await first.run(
            "start jobs",
            steps(
              callAll(
                ["exec_command", { cmd: "echo $$; sleep 300", ...PID_PRINTED }],
                ["exec_command", { cmd: "echo $$; trap '' TERM; sleep 300", ...PID_PRINTED }],
                ["exec_command", { cmd: "sleep 300 & echo $!; wait", ...PID_PRINTED }],
                ["exec_command", { cmd: "sleep 300 & echo $!; exit 0", ...PID_PRINTED }],
              ),
              say("started"),
            ),
          );
          const processes = jobProcesses(run);
          const ownDir = readdirSync(parent).find((name) => name.startsWith("pi-unified-exec-"))!;
          await waitFor(() => (jobGroups(parent)?.length ?? 0) === 4, "four registrations");
          await waitFor(() => /^x /m.test(readFileSync(join(parent, ownDir, REGISTRY_FILE), "utf8")), "the lingering job's leader exit");
          const { watchdog } = registryIn(parent)!;
          // Pi is stopped first: a live Pi would start a new watchdog the moment the first one died.
          process.kill(first.pid, "SIGSTOP");
          process.kill(watchdog!.pid, "SIGKILL");
          process.kill(first.pid, "SIGKILL");
          await first.close();
          assert.deepEqual(
            processes.filter((pid) => !processAlive(pid)),
            [],
            "with the watchdog killed too, the jobs survive the host",
          );

          // Beside it: an old dead runtime (expired), an old directory without a registry, and a dead
          // runtime whose registry names a live unrelated process with another start time.
          const stranger = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
          stranger.unref();
          strays.push(stranger.pid!);
          const plant = (lines: string[] | undefined, ageDays: number) => {
            const dir = mkdtempSync(join(parent, "pi-unified-exec-"));
            if (lines) writeFileSync(join(dir, REGISTRY_FILE), `${[REGISTRY_MAGIC, ...lines].join("\n")}\n`);
            writeFileSync(join(dir, "job-1-0000.log"), "old output\n");
            const when = new Date(Date.now() - ageDays * 86_400_000);
            for (const name of readdirSync(dir)) utimesSync(join(dir, name), when, when);
            return dir;
          };
          const expired = plant([`host ${first.pid} 1`], 8);
          const unproven = plant(undefined, 30);
          const strangerDir = plant([`host ${first.pid} 1`, `+ ${stranger.pid} 1 100 sleep 300`], 1);

          const second = await startPi(host, parent);
          try {
            const next = await second.run(
              "first job",
              steps(call("exec_command", { cmd: "echo hello" }), call("exec_command", { cmd: "echo again" }), say("done")),
            );
            const [firstResult, secondResult] = next.tools;
            const notice = headerOf(firstResult!.text).notice ?? "";
            const state = (pid: number) => {
              try {
                const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
                return `${pid}:${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]}`;
              } catch {
                return `${pid}:gone`;
              }
            };
            const diagnosis = [
              firstResult!.text,
              `second result notice: ${headerOf(secondResult!.text).notice}`,
              `registry:\n${readFileSync(join(parent, ownDir, REGISTRY_FILE), "utf8")}`,
              `swept marker: ${existsSync(join(parent, ownDir, "swept"))}`,
              `host ${state(first.pid)}, watchdog ${state(watchdog!.pid)}, jobs ${processes.map(state).join(" ")}`,
            ].join("\n");
            assert.match(
              notice,
              /^stopped 4 jobs that an earlier Pi process \(pid \d+\) left running when it ended without shutting down: /,
              diagnosis,
            );
            assert.ok(notice.includes("`echo $$; trap '' TERM; sleep 300`"), notice);
            assert.equal(firstResult!.structuredContent.notice, notice);
            assert.equal(headerOf(secondResult!.text).notice, undefined, "said once");
            await allEndWithin(processes, 3_000, "the left jobs to end");
            await waitFor(() => !existsSync(expired), "the expired directory to be removed");
            assert.ok(existsSync(unproven), "a directory without a registry is never removed");
            assert.ok(existsSync(strangerDir), "a young directory is kept");
            assert.ok(existsSync(join(parent, ownDir)), "the killed Pi's directory is kept for 7 days");
            assert.ok(processAlive(stranger.pid!), "a process whose start time differs is never signalled");
          } finally {
            await second.close();
          }
        });
      }

      it("the same watchdog serves the runtime after /reload", async () => {
        const parent = logParent();
        const pi = await startPi(host, parent, [EXTENSION_ENTRY, PROBE]);
        try {
          const before = jobProcesses(
            await pi.run(
              "before",
              steps(call("exec_command", { cmd: "echo $$; sleep 60", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }), say("ok")),
            ),
          );
          await waitFor(() => jobGroups(parent)?.length === 1, "the first registration");
          const watchdog = registryIn(parent)!.watchdog!.pid;
          assert.ok(processAlive(watchdog));
          const marker = join(parent, "reloaded");
          await pi.run(`/test-reload ${marker}`, steps());
          await waitFor(() => existsSync(marker), "the reload to finish", 30_000);
          const afterReload = jobProcesses(
            await pi.run(
              "after",
              steps(call("exec_command", { cmd: "echo $$; sleep 60", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }), say("ok")),
            ),
          );
          await waitFor(() => jobGroups(parent)?.length === 2, "the second registration");
          assert.equal(registryIn(parent)!.watchdog!.pid, watchdog, "the registry still names the first watchdog");
          assert.ok(processAlive(watchdog));
          assert.deepEqual(
            jobGroups(parent)!.map((group) => group.pgid),
            [before[0], afterReload[0]],
            "one watchdog holds the jobs from before and after the reload",
          );
        } finally {
          await pi.close();
        }
      });

      it("a SIGTERM to Pi while it stops its jobs at quit does not cut the 1 s grace short", async () => {
        const parent = logParent();
        const file = join(parent, "trap.log");
        const pi = await startPi(host, parent);
        const trap = `trap 'echo term >> ${file}; sleep 0.5; echo done >> ${file}; exit 0' TERM; echo $$; sleep 300 & wait`;
        const processes = jobProcesses(await pi.run("start", steps(call("exec_command", { cmd: trap, yield_time_ms: 300 }), say("ok"))));
        assert.ok(processes.every(processAlive));
        const closing = pi.close();
        await waitFor(() => existsSync(file) && readFileSync(file, "utf8").includes("term"), "the job to get its TERM at quit");
        process.kill(pi.pid, "SIGTERM");
        const exit = await closing;
        const log = readFileSync(file, "utf8");
        assert.equal(log, "term\ndone\n", `the job finished its TERM handler before Pi exited (${JSON.stringify(exit)})`);
      });
    },
  );
}
