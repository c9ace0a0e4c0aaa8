/**
 * The shutdown signal hold in a real Node process: a SIGTERM or SIGHUP during the held work does not
 * cut it short; afterwards the process ends by that signal when nothing else handles it, and goes on
 * when something does.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT } from "../../helpers/hosts.ts";
import { startNodeHost } from "../../helpers/node-host.ts";
import { waitFor } from "../../helpers/processes.ts";

const dir = mkdtempSync(join(tmpdir(), "piue-hold-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a process that holds signals for 500 ms of work, sends it `signal` as the work starts, and returns how it ended. */
async function holdAndSignal(signal: NodeJS.Signals, otherListener: boolean, name: string) {
  const file = join(dir, name);
  const program = `
    import { writeFileSync } from "node:fs";
    import { holdSignalsWhile } from ${JSON.stringify(join(REPO_ROOT, "src/core/supervision/tracked-jobs.ts"))};
    if (${otherListener}) process.on(${JSON.stringify(signal)}, () => console.log("other listener"));
    await holdSignalsWhile(async () => {
      console.log("holding");
      const t0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 500));
      writeFileSync(${JSON.stringify(file)}, "finished after " + Math.round(performance.now() - t0) + " ms");
    });
    console.log("after the hold");
  `;
  const { host: child, output } = startNodeHost(program);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, sig) => resolve({ code, signal: sig })),
  );
  await waitFor(() => output().includes("holding"), "the hold to start", 30_000);
  child.kill(signal);
  return { ...(await exited), out: output(), file };
}

describe("shutdown signal hold", { skip: process.platform === "win32" && "POSIX signals" }, () => {
  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    it(`a ${signal} during the held work lets it finish, then ends the process by ${signal} when nothing else handles it`, async () => {
      const result = await holdAndSignal(signal, false, `alone-${signal}`);
      assert.ok(existsSync(result.file), "the work finished");
      assert.match(readFileSync(result.file, "utf8"), /finished after \d+ ms/);
      assert.equal(result.signal, signal, `the process ended by ${signal}: ${JSON.stringify(result)}`);
    });
  }

  it("with another handler for the signal, the process is left to it and goes on", async () => {
    const result = await holdAndSignal("SIGTERM", true, "shared");
    assert.ok(existsSync(result.file), "the work finished");
    assert.equal(result.code, 0);
    assert.equal(result.signal, null);
    assert.match(result.out, /other listener[\s\S]*after the hold/);
  });
});
