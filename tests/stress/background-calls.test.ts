/**
 * The runtime's calls on a shell that leaves processes running, many times over beside CPU burners:
 * the scenarios of `tests/helpers/background-calls.ts`, which `tests/unit/core/job-background.test.ts`
 * runs once.
 */
import { describe, it } from "node:test";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { backgroundEndsAfterTheCall, quickAndKeptBackgrounds } from "../helpers/background-calls.ts";
import { startBurners } from "../helpers/load.ts";

describe("the runtime's calls on a shell that leaves processes running, beside CPU burners", () => {
  it("`sleep 0.4 & echo hi` ends in its call, and a server-like background returns running, 6 runs (burners)", async () => {
    const stopBurners = startBurners();
    const runtime = new ExecRuntime();
    try {
      await runtime.exec(prepareExec({ cmd: "true" }, process.cwd(), process.env));
      for (let run = 0; run < 6; run++) await quickAndKeptBackgrounds(runtime, run);
    } finally {
      stopBurners();
      await runtime.shutdown();
    }
  });

  it("a background process that ends after the call ends the job once: the next poll reports it, 4 runs (burners)", async () => {
    const stopBurners = startBurners();
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < 4; run++) await backgroundEndsAfterTheCall(runtime, run);
    } finally {
      stopBurners();
      await runtime.shutdown();
    }
  });
});
