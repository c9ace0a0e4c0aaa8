/**
 * `wake_on_pattern` beside CPU burners, 10 runs: a line printed after the call wakes exactly once,
 * with the line, and every byte stays for the poll. Once, without burners:
 * `tests/unit/core/runtime.speak-up.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileUntilPattern } from "../../src/core/patterns/line-pattern.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import { startBurners } from "../helpers/load.ts";
import { quietFor, waitFor } from "../helpers/processes.ts";
import { runningId } from "../helpers/reports.ts";
import { runtimesWithWakes } from "../helpers/runtime.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);
const tracked = runtimesWithWakes();

describe("wake_on_pattern through the runtime, beside CPU burners", () => {
  it("wakes exactly once with the line, and leaves every byte for the poll: 10 runs beside CPU burners", async () => {
    const stopBurners = startBurners();
    try {
      for (let run = 0; run < 10; run++) {
        const { runtime, patternWakes } = tracked();
        const report = await runtime.exec(
          exec("sleep 0.4; seq 1 300; echo 'ERROR at the end'; seq 301 600; sleep 300", { wake_on_pattern: "^ERROR" }),
        );
        const id = runningId(report)!;
        await waitFor(() => patternWakes().length > 0, `the wake of run ${run}`, 15_000);
        const poll = await runtime.interact({ jobId: id, window: { ms: 1_000 }, until: { pattern: compileUntilPattern("^600$") } });
        const lines = poll.output.text.trimEnd().split("\n");
        assert.equal(lines.length, 601, `run ${run}: every line once`);
        assert.equal(lines[300], "ERROR at the end");
        await quietFor(300);
        assert.deepEqual(
          patternWakes().map((wake) => [wake.line, wake.more]),
          [["ERROR at the end", 0]],
          `run ${run}`,
        );
        await runtime.shutdown();
      }
    } finally {
      stopBurners();
    }
  });
});
