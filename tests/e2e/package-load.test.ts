/**
 * `pi -e ./` loads the checkout as a package: Pi reads `pi.extensions` from package.json, registers
 * the tools, and a call works. (Installing the packed tarball is the packed-artifact test's job.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { headerOf, outputOf } from "../helpers/events.ts";
import { PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { call, steps } from "../helpers/scripted-model.ts";

for (const host of PI_HOSTS) {
  describe(`package loading on ${host.name}`, () => {
    it("pi -e <checkout> registers exec_command and write_stdin through the package manifest", async () => {
      const script = steps(call("exec_command", { cmd: "echo loaded" }), call("write_stdin", { session_id: 42 }));
      const run = await runJson(host, "hello", script, { extensions: [REPO_ROOT] });
      assert.equal(run.exitCode, 0, run.stderr);
      const [exec, poll] = run.tools;
      assert.equal(exec?.isError, false, exec?.text);
      assert.equal(headerOf(exec!.text).exit_code, "0");
      assert.equal(outputOf(exec!.text), "loaded\n");
      assert.match(poll?.text ?? "", /Unknown session_id 42/, "write_stdin is registered (not 'Tool not found')");
    });
  });
}
