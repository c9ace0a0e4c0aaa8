/**
 * Exactly once at the `next_turn` level, with real jobs through a runtime beside two CPU burners, 20
 * runs: two jobs exit with `on_exit: "next_turn"`, both notices are held, the model reads one exit by a
 * poll (forced between the hold and the next turn), and the next run takes only the other, once;
 * nothing ever starts a turn.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimeWithWakes } from "../helpers/runtime.ts";

const RUNS = 20;
const exec = (cmd: string) => prepareExec({ cmd, yield_time_ms: 250 }, process.cwd(), process.env);

describe("next_turn notices beside two burners", () => {
  const made: ReturnType<typeof runtimeWithWakes>[] = [];
  after(async () => {
    await Promise.all(made.map(({ runtime }) => runtime.shutdown()));
  });

  it("an exit read between the hold and the next turn never arrives; the other arrives once; nothing wakes: 20 runs", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < RUNS; run++) {
        const label = `run ${run}`;
        const tracked = runtimeWithWakes();
        made.push(tracked);
        const { runtime, batches } = tracked;
        const read = runningId(await runtime.exec(exec("sleep 0.3; exit 3"), { onExit: "next_turn", callId: "start-read" }))!;
        const unread = runningId(await runtime.exec(exec("sleep 0.3; exit 4"), { onExit: "next_turn", callId: "start-unread" }))!;
        runtime.completions.callEnded("start-read", false);
        runtime.completions.callEnded("start-unread", false);
        await waitFor(() => runtime.completions.waiting === 2, `${label}: both exits held`, 20_000);
        const poll = await runtime.interact({ jobId: read, window: { ms: 1_000 } }, { callId: "poll" });
        assert.equal(poll.job.exit?.exitCode, 3, label);
        runtime.completions.callEnded("poll", false);
        const turn = runtime.completions.takeForTurn();
        assert.deepEqual(
          turn?.jobs.map((job) => job.jobId),
          [unread],
          `${label}: only the exit nobody read`,
        );
        runtime.completions.runSettled();
        assert.equal(runtime.completions.takeForTurn(), undefined, `${label}: once`);
        assert.deepEqual(batches, [], `${label}: nothing started a turn`);
        await runtime.shutdown();
      }
    } finally {
      stop();
    }
  });
});
