/**
 * Every program in examples/ runs offline, checks its own outcome and exits within 2 s of its last
 * line (nothing of Pi or of ours keeps Node's loop alive after `close()`); a broken example fails the
 * suite. An example copied and changed so that its model leaves a server running still ends: the
 * shared `close()` stops the job as Pi's quit does, and the program exits within 5 s of its model's end.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/hosts.ts";
import { processAlive } from "../helpers/processes.ts";

const dir = join(REPO_ROOT, "examples");

describe("examples", { concurrency: 2 }, () => {
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
    // Not spawnSync: it would hold this process's event loop, and the examples could not run side by side.
    it(`${file} runs, passes its own checks and exits promptly after its last line`, async () => {
      const child = spawn(process.execPath, ["--import", "tsx", join(dir, file)], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      let done: number | undefined;
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        if (done === undefined && stdout.includes("example ok")) done = performance.now();
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      const guard = setTimeout(() => child.kill("SIGKILL"), 120_000);
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      clearTimeout(guard);
      assert.equal(code, 0, `${stdout}\n${stderr}`);
      assert.ok(done !== undefined, stdout);
      const lingered = performance.now() - done;
      assert.ok(lingered < 2_000, `the process lived ${Math.round(lingered)} ms after its last line`);
    });
  }
});

/** An example as a person would write it: the model starts the dev server and ends its turn, leaving it up. */
const LEAVES_A_SERVER = `
import { call, say, steps } from ${JSON.stringify(join(dir, "lib", "model-script.ts"))};
import { offlinePi } from ${JSON.stringify(join(dir, "lib", "offline-pi.ts"))};

const pi = await offlinePi({ quiet: true });
try {
  await pi.prompt(
    "Start the dev server and leave it running.",
    steps(
      call("exec_command", { cmd: "echo pid=$$; exec node ${join(dir, "lib", "dev-server.mjs")}", until_pattern: "listening on", yield_time_ms: 20_000 }),
      say("It is running."),
    ),
  );
  console.log(pi.calls[0]?.text);
  console.log("model done");
} finally {
  await pi.close();
}
`;

describe("an example whose model leaves a server running", () => {
  const scratch = mkdtempSync(join(tmpdir(), "piue-example-left-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("exits within 5 s of its model's end, the server stopped", async () => {
    const script = join(scratch, "leaves-a-server.mts"); // .mts: an ES module outside any package
    writeFileSync(script, LEAVES_A_SERVER);
    const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let modelDone: number | undefined;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (modelDone === undefined && stdout.includes("model done")) modelDone = performance.now();
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    // A hung example would otherwise wait for the server's 30-minute deadline.
    const guard = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(guard);
    const exited = performance.now();
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /^\[still running\]\nsession_id: \d+\n[\s\S]*listening on http:/m, "the server was left running by the model");
    assert.ok(modelDone !== undefined, stdout);
    const pid = Number(/pid=(\d+)/.exec(stdout)?.[1]);
    assert.ok(pid > 0, stdout);
    assert.equal(processAlive(pid), false, "the server is stopped");
    assert.ok(exited - modelDone < 5_000, `exited ${Math.round(exited - modelDone)} ms after the model's end`);
  });
});
