/**
 * No job outside the registry: whatever goes wrong after a job's process started, the job is one the
 * model can list and kill, and shutdown stops it. Forced deterministically: the call's first wait
 * throws once (as any fault between the start and the publication would), and a PTY job whose
 * transport cannot start leaves no log descriptor open. Real child processes and PTYs.
 */
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { after, describe, it } from "node:test";
import { Job } from "../../../src/core/job/job.ts";
import { LogDirectory } from "../../../src/core/log/job-log.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { processAlive, waitFor } from "../../helpers/processes.ts";

const runtimes: ExecRuntime[] = [];
after(async () => {
  for (const runtime of runtimes) await runtime.shutdown();
});

/** Makes the next `Job.wait` throw, as a fault between a job's start and its publication would. */
function failNextWait(): void {
  const wait = Job.prototype.wait;
  Job.prototype.wait = function (this: Job) {
    Job.prototype.wait = wait;
    return Promise.reject(new Error("injected fault after the start"));
  };
}

const openLogs = (dir: string) =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
    } catch {
      return false;
    }
  }).length;

describe("no job outside the registry", () => {
  for (const tty of [false, true]) {
    it(`a ${tty ? "PTY" : "pipe"} call that fails after its job started leaves the job listed, killable and stopped at shutdown`, async () => {
      const runtime = new ExecRuntime();
      runtimes.push(runtime);
      failNextWait();
      await assert.rejects(
        runtime.exec(prepareExec({ cmd: "echo $$; exec sleep 300", tty, yield_time_ms: 1_000 }, process.cwd(), process.env)),
        /injected fault/,
      );
      const listed = runtime.list();
      assert.equal(listed.length, 1, "the job is listed");
      assert.equal(listed[0]!.exit, undefined, "and running");
      const pid = runtime.jobs()[0]!.pid!;
      const killed = await runtime.kill(listed[0]!.jobId, "SIGKILL");
      assert.equal(killed.job.exit?.signal, "SIGKILL");
      await waitFor(() => !processAlive(pid), "the process to be gone");
      assert.deepEqual(runtime.list(), [], "nothing left");
    });
  }

  it("a job whose transport cannot start keeps no log open", async () => {
    const logs = new LogDirectory();
    const dir = logs.path();
    const before = openLogs(dir);
    assert.throws(
      () =>
        new Job({
          id: 1,
          command: "true",
          cwd: process.cwd(),
          logs,
          program: "/bin/sh",
          timeoutMs: 60_000,
          terminal: { cols: 80, rows: 24 },
          transport: () => {
            throw new Error("no terminal today");
          },
        }),
      /no terminal today/,
    );
    await waitFor(() => openLogs(dir) === before, "the log to be closed");
  });
});
