/**
 * A real dev server (vite) through the real Pi CLI, on the newest host (nothing here depends on the
 * host): started and waited for until it serves, its page fetched, an edit of its config restarts it
 * and wakes the model, which reads the restart with the read the wake names; a stop that leaves
 * nothing running and the port free. Skipped, saying why, where the npm registry cannot be reached.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, textOf } from "../helpers/events.ts";
import { NEWEST_HOST } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";
import { DEVELOPER_ENV, processesUnder, realTools } from "./tools.ts";

const { tools, skip } = realTools();
if (skip) console.log(`# the real-tools tier is skipped: ${skip}`);
const host = NEWEST_HOST;

describe(`a real dev server on ${host.name}`, { skip }, () => {
  let pi: PiRpcHost;
  let project: string;
  before(async () => {
    pi = await PiRpcHost.start(host);
    project = mkdtempSync(join(tmpdir(), "piue-real-vite-"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "served", private: true, type: "module" }));
    writeFileSync(
      join(project, "index.html"),
      '<!doctype html><title>served by vite</title><script type="module" src="/main.js"></script>\n',
    );
    writeFileSync(join(project, "main.js"), 'document.body.textContent = "hello";\n');
    writeFileSync(join(project, "vite.config.js"), "export default {};\n");
  });
  after(async () => {
    await pi?.close();
    rmSync(project, { recursive: true, force: true });
  });

  it("serves once ready, wakes the model when an edit restarts it, and stops leaving nothing and its port free", async () => {
    let read = "";
    pi.setWakeScript(
      steps(
        (view) => {
          const named = /write_stdin\(session_id: (\d+), until_quiet_ms: (\d+)\)/.exec(view.prompt);
          assert.ok(named, view.prompt);
          return call("write_stdin", { session_id: Number(named[1]), until_quiet_ms: Number(named[2]) });
        },
        (view) => {
          read = outputOf(view.last[0]!.text);
          return say("it restarted");
        },
      ),
    );
    const started = await pi.run(
      "start the dev server",
      steps(
        call("exec_command", {
          cmd: `${DEVELOPER_ENV} ${tools!.bin("vite")} --host 127.0.0.1`,
          workdir: project,
          until_pattern: "Local:\\s+http://",
          wake_on_pattern: "server restarted",
          yield_time_ms: 120_000,
        }),
        say("serving"),
      ),
    );
    const text = started.tools[0]!.text;
    assert.equal(headerOf(text).wait_status, "matched", text);
    const id = Number(headerOf(text).session_id);
    const url = /Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(outputOf(text))?.[1];
    assert.ok(url, text);
    assert.match(await (await fetch(url)).text(), /<title>served by vite<\/title>/);

    const from = pi.records.length;
    writeFileSync(join(project, "vite.config.js"), "export default { server: { strictPort: false } };\n");
    const wake = await pi.waitForRecord(isWake, from, 60_000, "the restart's wake");
    assert.match(textOf(wake.message.content), /line: .*server restarted/);
    await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 60_000, "the wake's turn");
    assert.match(read, /vite\.config\.js changed, restarting server/);
    assert.match(read, /server restarted/);

    pi.setWakeScript(() => say("noted"));
    const stopped = await pi.run("stop it", steps(call("kill_session", { session_id: id }), say("stopped")));
    assert.equal(headerOf(stopped.tools[0]!.text).cleanup, "confirmed", stopped.tools[0]!.text);
    assert.deepEqual(processesUnder(project), []);
    await assert.rejects(fetch(url), "the port is free");
  });
});
