/**
 * `until_listening` beside two CPU burners, 20 runs: a server that probes its port (listens for an
 * instant and closes, as vite and get-port do) before it listens for real ends the wait only at its
 * real listen, and the result names the address.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { freePort, probingServer } from "../helpers/bind-server.ts";
import { startBurners } from "../helpers/load.ts";
import { runningId } from "../helpers/reports.ts";

const dir = mkdtempSync(join(tmpdir(), "stress-listening-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("a port probe beside CPU burners", { skip: process.platform !== "linux" && "reads sockets from /proc (Linux)" }, () => {
  it("ends until_listening only at the real listen, naming it, 20 runs beside two burners", async () => {
    const stop = startBurners(2);
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < 20; run++) {
        const port = await freePort();
        const stamp = join(dir, `listened-${run}`);
        const report = await runtime.exec(
          prepareExec({ cmd: probingServer(port, stamp), until_listening: port, yield_time_ms: 30_000 }, process.cwd(), process.env),
        );
        const returned = Date.now();
        assert.equal(report.waitEnd, "listening", `run ${run}`);
        assert.deepEqual(report.job.listening, [`127.0.0.1:${port}`], `run ${run}`);
        assert.ok(returned >= Number(readFileSync(stamp, "utf8")), `run ${run}: returned before the real listen`);
        await runtime.kill(runningId(report)!, "SIGKILL");
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });
});
