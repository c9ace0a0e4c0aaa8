/**
 * What a waiting call tells the UI, with real jobs: a first update at once (the row's clock and
 * output already waiting show from the call's first moment), then one when output arrives; the
 * preview is what the call will return, never output an earlier call already read.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { WaitProgress } from "../../../src/core/job/job-snapshot.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";

describe("wait progress", () => {
  it("a poll's first update comes at once and already shows the output waiting for it", async () => {
    const runtime = new ExecRuntime();
    try {
      const started = await runtime.exec(
        // The start ends at the first line however long a busy machine takes to run it.
        prepareExec(
          { cmd: "echo first; sleep 1; echo waiting-line; sleep 30", until_pattern: "first", yield_time_ms: 10_000 },
          process.cwd(),
          process.env,
        ),
      );
      const id = runningId(started)!;
      assert.equal(started.output.text, "first\n");
      await waitFor(() => runtime.liveJobs().some((job) => job.jobId === id && job.outputBytesTotal >= 19), "the second line", 10_000);
      const updates: { at: number; progress: WaitProgress }[] = [];
      const t0 = performance.now();
      const polled = await runtime.interact(prepareWrite({ session_id: id, yield_time_ms: 1_500 }, process.env), {
        onProgress: (progress) => updates.push({ at: performance.now() - t0, progress }),
      });
      assert.ok(updates.length >= 1, "an update was sent");
      const first = updates[0]!;
      assert.ok(first.at < 1_000, `the first update came at once (${Math.round(first.at)} ms)`);
      assert.equal(first.progress.preview, "waiting-line\n", "it shows the output already waiting, and only that");
      assert.equal(first.progress.job.jobId, id);
      assert.ok(first.progress.elapsedMs < 1_000);
      assert.equal(polled.output.text, "waiting-line\n", "the call returns what it previewed");
    } finally {
      await runtime.shutdown();
    }
  });

  it("a quiet wait sends its first update and then none until output arrives (the row's own clock ticks)", async () => {
    const runtime = new ExecRuntime();
    try {
      const updates: WaitProgress[] = [];
      const report = await runtime.exec(prepareExec({ cmd: "sleep 1.2; echo late", yield_time_ms: 10_000 }, process.cwd(), process.env), {
        onProgress: (progress) => updates.push(progress),
      });
      assert.equal(report.output.text, "late\n");
      assert.equal(updates[0]?.preview, "", "the first update is sent before any output");
      assert.ok(updates.length <= 3, `a quiet second costs no updates: ${updates.length}`);
    } finally {
      await runtime.shutdown();
    }
  });
});
