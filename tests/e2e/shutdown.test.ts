/**
 * Quitting Pi leaves no child alive: live jobs, jobs that ignore SIGTERM, and descendants a finished
 * job left running in its process group, in RPC mode (stdin closed) and JSON mode (end of the run).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { outputOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive } from "../helpers/processes.ts";
import { call, callAll, steps } from "../helpers/scripted-model.ts";

const leaveChildren = steps(
  callAll(
    ["exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }],
    ["exec_command", { cmd: "trap '' TERM; sleep 300 & echo $!; wait", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }],
    ["exec_command", { cmd: "sleep 300 & echo $!; exit 0", until_pattern: "^[0-9]+$", yield_time_ms: 20_000 }],
  ),
);

for (const host of PI_HOSTS) {
  describe(`shutdown on ${host.name}`, () => {
    it("quitting an RPC session stops every job, including TERM-ignoring and lingering ones", async () => {
      const pi = await PiRpcHost.start(host);
      const run = await pi.run("start jobs", leaveChildren);
      const pids = run.tools.flatMap((tool) => pidsIn(outputOf(tool.text)));
      assert.equal(pids.length, 3, JSON.stringify(run.tools.map((tool) => tool.text)));
      assert.ok(pids.every(processAlive), "the jobs run before quitting");
      const exit = await pi.close();
      assert.equal(exit.code, 0, exit.stderr);
      assert.doesNotMatch(exit.stderr, /could not stop/);
      assert.deepEqual(pids.filter(processAlive), [], "no child outlives Pi");
    });

    it("a JSON-mode run stops its jobs when Pi exits", async () => {
      const run = await runJson(host, "start jobs", leaveChildren);
      assert.equal(run.exitCode, 0, run.stderr);
      const pids = run.tools.flatMap((tool) => pidsIn(outputOf(tool.text)));
      assert.equal(pids.length, 3);
      assert.deepEqual(pids.filter(processAlive), []);
    });
  });
}

for (const host of PI_HOSTS) {
  // Finding a descendant that left its groups reads /proc.
  describe(`a daemon holding a job's output on ${host.name}`, { skip: process.platform !== "linux" && "reads /proc" }, () => {
    it("does not keep a JSON run alive: Pi exits at once and the daemon is stopped", async () => {
      const started = performance.now();
      const run = await runJson(
        host,
        "start a daemon",
        steps(
          call("exec_command", {
            // The shell exits once the daemon's pid is in the pipe (a slow Python start under load included).
            cmd:
              `python3 -c "import os; os.setsid(); print(os.getpid(), flush=True); open('daemon-ready', 'w').close(); ` +
              `os.execvp('sleep', ['sleep', '60'])" & until [ -e daemon-ready ]; do sleep 0.05; done`,
            // The shell's exit ends the wait; python3 (a pyenv shim here) alone took 1.9 s to start
            // at a load of 14, so a 2 s window returned before the pid was printed.
            yield_time_ms: 20_000,
          }),
        ),
        { timeoutMs: 50_000 },
      );
      assert.equal(run.exitCode, 0, run.stderr);
      const [daemon] = pidsIn(outputOf(run.tools[0]!.text));
      assert.ok(daemon, run.tools[0]!.text);
      // Well below the daemon's 60 s: Pi did not wait for it (a loaded machine starts Pi slowly).
      assert.ok(performance.now() - started < 40_000, `Pi took ${Math.round(performance.now() - started)} ms`);
      assert.equal(processAlive(daemon), false, "the daemon that held the job's output outlived Pi");
    });
  });
}
