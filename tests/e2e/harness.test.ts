/**
 * The real-host harness drives everything later tests need, on the newest host: prompts with a
 * scripted model (parallel calls, later steps using earlier results), extension commands that open
 * dialogs answered through `extension_ui_request`, and `new_session`. And no run hangs: a host that
 * never answers is stopped with everything it started, at its start's window or at its file's ceiling.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SILENT_PI } from "../fixtures/silent-pi-host.ts";
import { EXTENSION_ENTRY, NEWEST_HOST, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { processAlive, waitFor } from "../helpers/processes.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");

describe(`harness on ${NEWEST_HOST.name}`, () => {
  let pi: PiRpcHost;
  before(async () => {
    pi = await PiRpcHost.start(NEWEST_HOST, { extensions: [EXTENSION_ENTRY, PROBE] });
  });
  after(async () => {
    await pi?.close();
  });

  it("runs a script whose steps issue parallel calls and read earlier results", async () => {
    const run = await pi.run(
      "two at once",
      steps(callAll(["exec_command", { cmd: "echo a" }], ["exec_command", { cmd: "echo b" }]), (view) =>
        say(`saw ${view.last.length} results: ${view.last.map((r) => r.details.exit_code).join(",")}`),
      ),
    );
    assert.equal(run.tools.length, 2);
    assert.ok(run.tools.every((tool) => typeof tool.durationMs === "number" && tool.structuredContent?.status === "exited"));
    assert.equal(run.finalText, "saw 2 results: 0,0");
  });

  it("sends an extension command and answers its dialog", async () => {
    pi.onUiRequest((request) => (request.method === "select" ? { value: request.options.at(-1) } : undefined));
    const from = pi.records.length;
    await pi.run("/probe-select", steps());
    const posted = await pi.waitForRecord(
      (record) => record.type === "message_end" && record.message?.customType === "probe",
      from,
      10_000,
      "the probe's message",
    );
    assert.equal(posted.message.content, "picked beta");
    pi.onUiRequest(undefined);
  });

  it("starts a new session, and prompts keep working in it", async () => {
    const response = await pi.request({ type: "new_session" });
    assert.equal(response.success, true, JSON.stringify(response));
    assert.equal(response.data?.cancelled, false);
    const run = await pi.run("after new", steps(call("exec_command", { cmd: "echo fresh" })));
    assert.equal(run.tools[0]?.structuredContent?.output, "fresh\n");
  });
});

describe("a host that never answers (a fake pi that reads its stdin and never answers)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "piue-silent-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The fake pi's pid, its child's, and its scripted model's address, once it wrote them. */
  const launched = async (pidsFile: string) => {
    await waitFor(() => written(pidsFile), "the fake pi's pids", 20_000);
    const [pi, child, modelUrl] = readFileSync(pidsFile, "utf8").split("\n");
    return { pids: [Number(pi), Number(child)], modelUrl: modelUrl! };
  };
  const written = (pidsFile: string) => existsSync(pidsFile) && readFileSync(pidsFile, "utf8").split("\n").length > 3;
  const modelAnswers = (url: string) =>
    fetch(url, { method: "POST", body: "{}" }).then(
      () => true,
      () => false,
    );

  it("fails its start after the window, saying so, with the fake pi, its child and its model stopped", async () => {
    const pidsFile = join(dir, "start.pids");
    const t0 = performance.now();
    await assert.rejects(
      PiRpcHost.start(SILENT_PI, { readyMs: 1_000, env: { FAKE_PI_PIDS: pidsFile } }),
      /a fake pi that never answers did not answer get_state within 1000 ms; stopped it/,
    );
    assert.ok(performance.now() - t0 < 15_000, `failed after ${Math.round(performance.now() - t0)} ms`);
    const { pids, modelUrl } = await launched(pidsFile);
    await waitFor(() => pids.every((pid) => !processAlive(pid)), "the fake pi and its child to be gone", 5_000);
    assert.equal(await modelAnswers(modelUrl), false, "the scripted model's server is closed");
  });

  it("fails its test file at the file's ceiling, naming the file and the ceiling, with everything it launched stopped", async () => {
    const pidsFile = join(dir, "ceiling.pids");
    const fixture = join("tests", "fixtures", "silent-host.fixture.ts");
    const runner = spawn(
      process.execPath,
      ["--import", "tsx", "--import", "./tests/helpers/test-logs.ts", "--test", "--test-reporter=spec", fixture],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, FAKE_PI_PIDS: pidsFile, PI_UNIFIED_EXEC_TEST_CEILING_S: "8", NODE_TEST_CONTEXT: undefined },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let printed = "";
    for (const stream of [runner.stdout, runner.stderr]) {
      stream.on("data", (chunk) => {
        printed += chunk;
      });
    }
    const t0 = performance.now();
    // Without a ceiling the file would wait for good: stopped here after 45 s, it fails below.
    const stop = setTimeout(() => runner.kill("SIGKILL"), 45_000);
    const code = await new Promise<number | null>((resolve) => runner.on("close", resolve));
    clearTimeout(stop);
    const tookMs = performance.now() - t0;
    assert.notEqual(code, 0, printed);
    assert.match(printed, /tests\/fixtures\/silent-host\.fixture\.ts did not finish within its 8 s ceiling/, printed);
    assert.ok(tookMs < 40_000, `the file failed after ${Math.round(tookMs)} ms`);
    // A machine too busy to start the fake within the ceiling leaves nothing to stop.
    if (!written(pidsFile)) return;
    const { pids } = await launched(pidsFile);
    await waitFor(() => pids.every((pid) => !processAlive(pid)), "the fake pi and its child to be gone", 5_000);
  });
});
