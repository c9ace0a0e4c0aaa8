/**
 * The real-host harness drives everything later tests need, on both hosts: prompts with a scripted
 * model (parallel calls, later steps using earlier results), extension commands that open dialogs
 * answered through `extension_ui_request`, and `new_session`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");

for (const host of PI_HOSTS) {
  describe(`harness on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE] });
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
}
