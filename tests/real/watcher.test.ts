/**
 * A real test watcher (vitest in watch mode) through the real Pi CLI, on both hosts: started and waited for
 * until it watches, an edit breaks a test and the failure wakes the model, which reads it with the
 * read the wake names; a fix, then a second break whose failure wakes within 5 s of the edit (the
 * pattern cooldown restarts from the model's call), then a stop that leaves nothing running.
 * Skipped, saying why, where the npm registry cannot be reached (tools.ts).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, type PiEvent, textOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { call, say, steps } from "../helpers/scripted-model.ts";
import { DEVELOPER_ENV, processesUnder, realTools } from "./tools.ts";

const { tools, skip } = realTools();
if (skip) console.log(`# the real-tools tier is skipped: ${skip}`);

const SUM = (op: "+" | "-") => `export const sum = (a, b) => a ${op} b;\n`;
const WATCHING = /Waiting for file changes|Watching for file changes/g;

for (const host of PI_HOSTS) {
  describe(`a real test watcher on ${host.name}`, { skip }, () => {
    let pi: PiRpcHost;
    let project: string;
    before(async () => {
      pi = await PiRpcHost.start(host);
      project = mkdtempSync(join(tmpdir(), "piue-real-vitest-"));
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "watched", private: true, type: "module" }));
      writeFileSync(join(project, "sum.js"), SUM("+"));
      writeFileSync(
        join(project, "sum.test.js"),
        'import { expect, test } from "vitest";\nimport { sum } from "./sum.js";\ntest("adds", () => expect(sum(1, 2)).toBe(3));\n',
      );
    });
    after(async () => {
      await pi?.close();
      rmSync(project, { recursive: true, force: true });
    });

    it("wakes the model on each failing run, the second within 5 s of the edit that caused it, and stops leaving nothing", async () => {
      const reads: { ms: number; output: string }[] = [];
      let asked = 0;
      // The model makes the read the wake names, as written there.
      pi.setWakeScript(
        steps(
          (view) => {
            const named = /write_stdin\(session_id: (\d+), until_quiet_ms: (\d+)\)/.exec(view.prompt);
            assert.ok(named, view.prompt);
            asked = performance.now();
            return call("write_stdin", { session_id: Number(named[1]), until_quiet_ms: Number(named[2]) });
          },
          (view) => {
            reads.push({ ms: performance.now() - asked, output: outputOf(view.last[0]!.text) });
            return say("I will fix it");
          },
        ),
      );
      const started = await pi.run(
        "watch the tests",
        steps(
          call("exec_command", {
            cmd: `${DEVELOPER_ENV} ${tools!.bin("vitest")} --watch`,
            workdir: project,
            until_pattern: "Waiting for file changes",
            wake_on_pattern: "Tests failed",
            yield_time_ms: 120_000,
          }),
          say("watching"),
        ),
      );
      const header = headerOf(started.tools[0]!.text);
      assert.equal(header.wait_status, "matched", started.tools[0]!.text);
      const id = Number(header.session_id);
      const log = header.log_path!;
      const watching = () => readFileSync(log, "utf8").match(WATCHING)?.length ?? 0;
      const wakeAfter = async (from: number, what: string): Promise<{ wake: PiEvent; at: number }> => {
        const wake = await pi.waitForRecord(isWake, from, 60_000, what);
        const at = performance.now();
        await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 60_000, `${what}'s turn`);
        return { wake, at };
      };

      writeFileSync(join(project, "sum.js"), SUM("-"));
      const first = await wakeAfter(pi.records.length, "the first failure's wake");
      assert.match(textOf(first.wake.message.content), /line: .*Tests failed/);
      writeFileSync(join(project, "sum.js"), SUM("+"));
      const runs = watching();
      await waitFor(() => watching() > runs, "the run after the fix", 60_000, 50);
      const from = pi.records.length;
      const edited = performance.now();
      writeFileSync(join(project, "sum.js"), SUM("-"));
      const second = await wakeAfter(from, "the second failure's wake");
      assert.ok(second.at - edited < 5_000, `the second failure woke the model ${Math.round(second.at - edited)} ms after the edit`);

      assert.equal(reads.length, 2);
      for (const read of reads) {
        assert.match(read.output, /FAIL .*sum\.test\.js > adds/);
        assert.match(read.output, /expected -1 to be 3/);
        assert.ok(read.ms < 5_000, `the named read took ${Math.round(read.ms)} ms`);
      }
      pi.setWakeScript(() => say("noted"));
      const stopped = await pi.run("stop", steps(call("kill_session", { session_id: id }), say("stopped")));
      assert.equal(headerOf(stopped.tools[0]!.text).cleanup, "confirmed", stopped.tools[0]!.text);
      assert.deepEqual(processesUnder(project), []);
    });
  });
}
