/**
 * Nothing of a finished job is kept once it is reported and pruned: its output buffers, screen,
 * pattern watch and log are garbage once the model has read its exit and its processes are proven
 * gone. Checked with weak references and a full garbage collection, over a mix of jobs: pipes and
 * PTYs, floods and silence, wakes armed, patterns armed, a job typed into.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { prepareExec } from "../../../src/core/request/request.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runtimeWithWakes } from "../../helpers/runtime.ts";

function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

describe("what a runtime keeps of finished jobs", () => {
  /** Runs 16 jobs of every kind to their reported end; only weak references to them come back. */
  async function runJobs(runtime: ReturnType<typeof runtimeWithWakes>["runtime"]): Promise<WeakRef<object>[]> {
    const kept: WeakRef<object>[] = [];
    for (let i = 0; i < 16; i++) {
      const cmd = ["seq 1 30000", "sleep 0.3; echo later", "printf 'tty\\n'; sleep 0.3", "cat"][i % 4]!;
      const report = await runtime.exec(
        prepareExec(
          { cmd, yield_time_ms: 250, tty: i % 4 === 2, ...(i % 3 === 0 ? { wake_on_pattern: "later" } : {}) },
          process.cwd(),
          process.env,
        ),
        { onExit: i % 2 === 0 ? "wake" : "none", callId: `exec-${i}` },
      );
      runtime.completions.callEnded(`exec-${i}`, false);
      const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId);
      if (!job) continue;
      kept.push(new WeakRef(job));
      if (cmd === "cat") {
        const taken = runtime.typeInto(job.id);
        if ("typing" in taken) {
          await taken.typing.type(Buffer.from("typed\n"));
          taken.typing.end();
        }
        await runtime.interact({ jobId: job.id, window: { ms: 250 }, input: { kind: "eof" } }, { callId: `eof-${i}` });
        runtime.completions.callEnded(`eof-${i}`, false);
      }
      await new Promise<void>((resolve) => job.onExit(resolve));
      if (runtime.jobs().includes(job)) {
        await runtime.interact({ jobId: job.id, window: { ms: 250 } }, { callId: `read-${i}` });
        runtime.completions.callEnded(`read-${i}`, false);
      }
    }
    return kept;
  }

  it("a reported, pruned job is garbage: 16 jobs of every kind leave no Job behind", async () => {
    const { runtime } = runtimeWithWakes();
    const kept = await runJobs(runtime);
    assert.ok(kept.length >= 8, `${kept.length} jobs outlived their call`);
    // A listing prunes what is proven over (a leader just reaped may need a moment); then nothing may remain.
    const alive = () => kept.filter((ref) => ref.deref() !== undefined).length;
    await waitFor(
      () => {
        runtime.list();
        collectGarbage();
        return alive() === 0;
      },
      "every finished job to be garbage",
      10_000,
      200,
    );
    await runtime.shutdown();
  });
});
