/**
 * Ports beside two CPU burners, 20 runs each: a server that closes its socket a moment after the
 * SIGTERM is reported released only once it is, and a bind right after the kill succeeds; a server
 * that closes its port while it runs is told deaf once, after 2 s, and the listing says so; a direct
 * spawn's first child starts with the raised `oom_score_adj` (raised after the spawn, 4 in 30 kept
 * Pi's). (The interleavings themselves are forced on plain data in tests/unit/core/ports.test.ts.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { freePort } from "../helpers/bind-server.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimeWithWakes, shutDownAfter } from "../helpers/runtime.ts";
import { bindsNow, nodeServer } from "../helpers/servers.ts";

// Twenty deaf notices in one runtime: without this the turn budget (6 per 10 minutes) holds the
// seventh for a next turn this test never starts. The budget has tests of its own.
process.env.PI_UNIFIED_EXEC_WAKE_TURNS = "0";

const SKIP = process.platform !== "linux" && "reads sockets from /proc (Linux)";
const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 30_000, ...extra }, process.cwd(), process.env);

/** A Node server that, on SIGTERM, keeps its port 300 ms more before it exits. */
const slowToClose = (port: number) =>
  `node -e "require('node:net').createServer().listen(${port}, '127.0.0.1'); process.on('SIGTERM', () => setTimeout(() => process.exit(0), 300))"`;

describe("ports beside CPU burners", { skip: SKIP }, () => {
  it("a killed server's port is released only once it is free: a bind right after succeeds, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const { runtime } = runtimeWithWakes();
    try {
      for (let run = 0; run < 20; run++) {
        const port = await freePort();
        const started = await runtime.exec(exec(slowToClose(port), { until_listening: port }));
        const report = await runtime.kill(runningId(started)!, "SIGTERM");
        assert.deepEqual(report.portsReleased, [port], `run ${run}`);
        assert.equal(await bindsNow(port), true, `run ${run}: the bind right after the kill`);
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });

  it("a server that closes its port while it runs is told deaf once, after 2 s, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const { runtime, batches } = runtimeWithWakes();
    try {
      for (let run = 0; run < 20; run++) {
        const port = await freePort();
        const started = await runtime.exec(exec(nodeServer(port), { until_listening: port }), { onExit: "wake" });
        const id = runningId(started)!;
        const told = () => batches.flatMap((batch) => batch.deaf ?? []).filter((wake) => wake.jobId === id).length;
        await runtime.interact(prepareWrite({ session_id: id, chars: "\n", until_pattern: "closed", yield_time_ms: 10_000 }, process.env));
        const closed = performance.now();
        await waitFor(() => told() === 1, `run ${run}: the deaf notice`, 20_000, 50);
        assert.ok(performance.now() - closed >= 2_000, `run ${run}: told before 2 s`);
        assert.deepEqual(runtime.list().find((job) => job.jobId === id)?.deaf?.was, [`127.0.0.1:${port}`], `run ${run}`);
        const ticks = runtime.monitor.ticks;
        await waitFor(() => runtime.monitor.ticks >= ticks + 1, "one more look", 10_000, 50);
        assert.equal(told(), 1, `run ${run}: told once`);
        await runtime.kill(id, "SIGKILL");
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });

  it("a directly spawned job's first child starts with the raised oom_score_adj, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const runtime = shutDownAfter()(new ExecRuntime({ warmShells: false }));
    try {
      for (let run = 0; run < 20; run++) {
        const report = await runtime.exec(exec("cat /proc/self/oom_score_adj; cat /proc/$$/oom_score_adj", { yield_time_ms: 5_000 }));
        const [child, shell] = report.output.text.trim().split("\n").map(Number);
        assert.equal(child, shell, `run ${run}: the child kept another score than its shell`);
        assert.ok(child! >= 500, `run ${run}: ${child}`);
      }
    } finally {
      stop();
    }
  });
});
