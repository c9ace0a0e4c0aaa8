import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../../helpers/hosts.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";

describe("process exit guard", () => {
  it("a process that exits without shutting its runtime down leaves no job behind", async () => {
    const program = `
      import { prepareExec } from ${JSON.stringify(join(REPO_ROOT, "src/core/request/request.ts"))};
      import { ExecRuntime } from ${JSON.stringify(join(REPO_ROOT, "src/core/runtime.ts"))};
      const runtime = new ExecRuntime();
      const report = await runtime.exec(prepareExec({ cmd: "echo $$; trap '' TERM; sleep 300", yield_time_ms: 300 }, process.cwd(), process.env));
      console.log(report.output.text.trim());
      process.exit(0);
    `;
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(result.status, 0, result.stderr);
    const [pid] = pidsIn(result.stdout);
    assert.ok(pid, result.stdout);
    await waitFor(() => !processAlive(pid), "the orphan-to-be to be killed");
  });
});
