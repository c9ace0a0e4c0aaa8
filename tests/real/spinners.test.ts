/**
 * Real spinner-drawing tools on a PTY through the real Pi CLI, on both hosts: npm's install spinner and ora's leave only their final line in results, an anchored `until_pattern` matches the final
 * line and npm init's `package name:` prompt, and nothing is left running. Skipped, saying why, where
 * the npm registry cannot be reached (tools.ts).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { headerOf, outputOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, firstSession, say, steps } from "../helpers/scripted-model.ts";
import { DEVELOPER_ENV, NPM_FETCHED, processesUnder, realTools } from "./tools.ts";

const { tools, skip } = realTools();
if (skip) console.log(`# the real-tools tier is skipped: ${skip}`);

/** A spinner frame (npm's and ora's dots) anywhere in the text. */
const FRAME = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

for (const host of PI_HOSTS) {
  describe(`spinners and prompts of real tools on ${host.name}`, { skip: skip ?? SKIP_WITHOUT_PTY }, () => {
    let pi: PiRpcHost;
    let dir: string;
    before(async () => {
      pi = await PiRpcHost.start(host);
      dir = mkdtempSync(join(tmpdir(), "piue-real-spin-"));
    });
    after(async () => {
      await pi?.close();
      await waitFor(() => processesUnder(dir).length === 0, `nothing left running under ${dir}: ${processesUnder(dir).join("; ")}`);
      rmSync(dir, { recursive: true, force: true });
    });

    it("npm install's spinner leaves only its final line, which an anchored until_pattern matches", async () => {
      const project = join(dir, `npm-${host.name.replace(/\W+/g, "-")}`);
      // A local dependency whose install script takes 2 s: npm spins all that time (it starts after 200 ms).
      mkdirSync(join(project, "slow"), { recursive: true });
      writeFileSync(
        join(project, "slow", "package.json"),
        JSON.stringify({ name: "slow", version: "1.0.0", scripts: { install: "sleep 2" } }),
      );
      const manifest = { name: "spinner-test", version: "1.0.0", private: true, dependencies: { slow: "file:./slow" } };
      writeFileSync(join(project, "package.json"), JSON.stringify(manifest));
      const run = await pi.run(
        "install it",
        steps(
          // A fresh cache (Pi's isolated HOME): npm fetches from the registry too.
          call("exec_command", {
            cmd: `${DEVELOPER_ENV} npm install --no-audit --no-fund --no-update-notifier ${NPM_FETCHED}`,
            workdir: project,
            tty: true,
            until_pattern: "^added \\d+ packages? in",
            yield_time_ms: 120_000,
          }),
          say("installed"),
        ),
        150_000,
      );
      const result = run.tools[0]!.text;
      const header = headerOf(result);
      assert.equal(header.wait_status, "matched", result);
      assert.match(header.matched_line ?? "", /^added 2 packages in [\d.]+m?s$/);
      assert.match(outputOf(result), /^added 2 packages in [\d.]+m?s$/m);
      assert.doesNotMatch(outputOf(result), FRAME, "no spinner frame is left in the text");
      const log = readFileSync(header.log_path!, "utf8");
      assert.match(log, /\x1b\[1G/, "npm drew its spinner (the log keeps every byte)");
      assert.match(log, FRAME);
    });

    it("ora's spinner shows one frame while it spins and only its final line once it succeeds", async () => {
      const script = join(dir, "spin.mjs");
      const ora = pathToFileURL(join(tools!.dir, "node_modules", "ora", "index.js")).href;
      writeFileSync(
        script,
        `import ora from ${JSON.stringify(ora)};\nconst s = ora("installing").start();\nsetTimeout(() => s.succeed("added 3 packages in 2s"), 2000);\n`,
      );
      const run = await pi.run(
        "spin",
        steps(
          // Waits for the first frame rather than a fixed time: loading ora takes over a second on a busy machine.
          call("exec_command", {
            cmd: `${DEVELOPER_ENV} node ${script}`,
            tty: true,
            until_pattern: " installing$",
            yield_time_ms: 30_000,
          }),
          (view) =>
            call("write_stdin", { session_id: firstSession(view), until_pattern: "^✔ added \\d+ packages in", yield_time_ms: 30_000 }),
          say("done"),
        ),
      );
      const [spinning, done] = run.tools;
      assert.match(outputOf(spinning!.text), /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] installing$/, spinning!.text);
      assert.equal(headerOf(done!.text).wait_status, "matched", done!.text);
      assert.equal(outputOf(done!.text), "✔ added 3 packages in 2s\n");
    });

    it("an anchored until_pattern matches npm init's package name prompt", async () => {
      const project = join(dir, `init-${host.name.replace(/\W+/g, "-")}`);
      mkdirSync(project);
      const run = await pi.run(
        "init",
        steps(
          call("exec_command", {
            cmd: `${DEVELOPER_ENV} npm init`,
            workdir: project,
            tty: true,
            until_pattern: "^package name: ",
            yield_time_ms: 60_000,
          }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
          say("stopped"),
        ),
      );
      const [prompted, killed] = run.tools;
      const header = headerOf(prompted!.text);
      assert.equal(header.wait_status, "matched", prompted!.text);
      assert.match(header.matched_line ?? "", /^package name: \(init-[\w-]+\) $/);
      assert.match(outputOf(prompted!.text), /\npackage name: \(init-[\w-]+\) $/);
      assert.equal(headerOf(killed!.text).cleanup, "confirmed", killed!.text);
    });
  });
}
