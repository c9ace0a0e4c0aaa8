/**
 * The packed artifact, as users get it: `npm pack`, then installed into an isolated agent dir with
 * the real `pi install`, on every host, and driven through all five tools in a run that loads it the
 * way Pi loads installed packages (with PI_OFFLINE=1 and without `-ne`, which would turn it off).
 * Also pins down the two install spellings that look right and do not work.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import type { PiDirs } from "../helpers/pi-process.ts";
import { call, firstSession, type ModelView, steps } from "../helpers/scripted-model.ts";
import { piInstall as piInstallWith } from "./pi-install.ts";

let work: string;
let tarball: string;
const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string; version: string };

before(() => {
  work = mkdtempSync(join(tmpdir(), "piue-pack-"));
  execFileSync("npm", ["pack", "--pack-destination", work, "--silent"], { cwd: REPO_ROOT, encoding: "utf8" });
  tarball = join(work, `${manifest.name}-${manifest.version}.tgz`);
});
after(() => rmSync(work, { recursive: true, force: true }));

/** `pi install <spec>` with the host's CLI into the test's isolated agent dir. */
function piInstall(cliPath: string, dirs: PiDirs, spec: string): string {
  return piInstallWith(cliPath, dirs, spec, join(work, "npm-cache"));
}

describe("the packed tarball", () => {
  it("ships the source, docs, examples and notices, and no test or dev file", () => {
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n");
    for (const required of [
      "package/package.json",
      "package/README.md",
      "package/LICENSE",
      "package/THIRD_PARTY_NOTICES.md",
      "package/index.ts",
      "package/src/index.ts",
      "package/src/core/supervision/watchdog.sh",
    ]) {
      assert.ok(files.includes(required), `${required} missing`);
    }
    for (const doc of ["architecture.md", "reference.md", "testing.md", "decisions.md"])
      assert.ok(files.includes(`package/docs/${doc}`), `docs/${doc} missing`);
    assert.ok(
      files.some((file) => file.startsWith("package/examples/") && file.endsWith(".ts")),
      "no example",
    );
    const forbidden = files.filter(
      (file) => /^package\/(tests|\.ci|\.github|node_modules)\//.test(file) || /^package\/(tsconfig\.json|\.gitignore|\.npmrc)$/.test(file),
    );
    assert.deepEqual(forbidden, []);
  });

  it("carries a version above the unrelated pi-unified-exec 0.11.0 on the registry", () => {
    const packed = JSON.parse(execFileSync("tar", ["-xOzf", tarball, "package/package.json"], { encoding: "utf8" })) as { version: string };
    const [major, minor] = packed.version.split(".").map(Number) as [number, number];
    assert.ok(major > 0 || minor > 11, `version ${packed.version} is not above 0.11.0`);
  });
});

for (const host of PI_HOSTS) {
  describe(`installing the tarball with ${host.name}`, () => {
    it("npm:pi-unified-exec@file:<absolute tarball> installs, and a run without -ne drives all five tools", async () => {
      const lastSession = (view: ModelView) => view.results.at(-1)!.details.session_id as number;
      const run = await runJson(
        host,
        "use the installed package",
        steps(
          // A shell loop rather than cat: cat closes the terminal itself before exiting, and node-pty then
          // closes the master early enough that the kernel's hangup can reach it (exit 129).
          call("exec_command", {
            cmd: 'stty size; while read -r line; do echo "got $line"; done',
            tty: true,
            cols: 100,
            rows: 30,
            yield_time_ms: 1_000,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), cols: 90, rows: 20, chars: "hello\\r", yield_time_ms: 1_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x04", yield_time_ms: 5_000 }),
          call("exec_command", { cmd: "sleep 300", yield_time_ms: 250, on_exit: "wake" }),
          (view) => call("set_on_exit", { session_id: lastSession(view), on_exit: "none" }),
          () => call("list_sessions", {}),
          (view) => call("kill_session", { session_id: view.results[3]!.details.session_id }),
        ),
        {
          extensions: [],
          noExtensions: false,
          setup: (dirs) => {
            const installed = piInstall(host.cliPath, dirs, `npm:${manifest.name}@file:${tarball}`);
            assert.match(installed, /Installed npm:pi-unified-exec@file:/);
            assert.ok(
              existsSync(join(dirs.agentDir, "npm", "node_modules", manifest.name, "src", "index.ts")),
              "installed into the agent dir",
            );
          },
        },
      );
      assert.equal(run.exitCode, 0, run.stderr);
      const calls = inCallOrder(run);
      assert.deepEqual(
        calls.map((c) => c.name),
        ["exec_command", "write_stdin", "write_stdin", "exec_command", "set_on_exit", "list_sessions", "kill_session"],
      );
      for (const result of calls) assert.equal(result.isError, false, result.text);
      assert.equal(outputOf(calls[0]!.text), "30 100\n", "the PTY has the size asked for");
      assert.match(outputOf(calls[1]!.text), /hello\ngot hello\n/, "input reached the PTY (echo, then the loop's line)");
      assert.equal(headerOf(calls[1]!.text).cols, "90");
      assert.equal(headerOf(calls[2]!.text).exit_code, "0", "Ctrl-D ended the input");
      assert.equal(calls[4]!.structuredContent.status, "disarmed");
      assert.equal((calls[5]!.structuredContent.sessions as unknown[]).length, 1);
      assert.equal(headerOf(calls[6]!.text).cleanup, "confirmed");
    });

    it("pi install ./x.tgz records a path that fails to load", async () => {
      const run = await runJson(host, "hello", steps(), {
        extensions: [],
        noExtensions: false,
        setup: (dirs) => {
          copyFileSync(tarball, join(dirs.cwd, "x.tgz"));
          piInstall(host.cliPath, dirs, "./x.tgz");
        },
      });
      assert.notEqual(run.exitCode, 0);
      assert.match(run.stderr, /Failed to load extension .*x\.tgz/);
    });

    it("pi install npm:/abs/x.tgz reports success but never loads the tools", async () => {
      const run = await runJson(host, "hello", steps(call("exec_command", { cmd: "echo never" })), {
        extensions: [],
        noExtensions: false,
        setup: (dirs) => {
          copyFileSync(tarball, join(dirs.cwd, "x.tgz"));
          assert.match(piInstall(host.cliPath, dirs, `npm:${join(dirs.cwd, "x.tgz")}`), /Installed npm:/);
        },
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(run.tools[0]!.text, /Tool exec_command not found/);
    });
  });
}
