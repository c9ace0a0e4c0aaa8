/**
 * The README's ways to use a checkout, with the real CLI on every host, each in an isolated agent
 * dir and run the way Pi runs a user's setup (PI_OFFLINE=1, without `-ne`, which would turn installed
 * packages off): `pi install /abs/checkout` records the directory and loads it in place, with the PTY
 * module from the checkout's own node_modules; `pi -e /abs/checkout` loads it for one run. (The
 * tarball form is the packed-artifact test's job.)
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, rmSync, symlinkSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { makeDirs } from "../helpers/pi-process.ts";
import { call, steps } from "../helpers/scripted-model.ts";
import { installedPackages, piInstall, piRemove } from "./pi-install.ts";

/** A pipe job, a PTY job (the PTY module must resolve from wherever the package loaded), and a poll. */
const script = steps(
  call("exec_command", { cmd: "echo from-the-checkout", yield_time_ms: 5_000 }),
  call("exec_command", { cmd: "stty size; read -r line; echo got $line", tty: true, cols: 90, rows: 20, yield_time_ms: 1_000 }),
  (view) => call("write_stdin", { session_id: view.results[1]!.details.session_id, chars: "hi\\r", yield_time_ms: 5_000 }),
);

function assertDriven(run: Awaited<ReturnType<typeof runJson>>): void {
  assert.equal(run.exitCode, 0, run.stderr);
  const [pipe, pty, poll] = inCallOrder(run);
  assert.deepEqual([pipe?.name, pty?.name, poll?.name], ["exec_command", "exec_command", "write_stdin"], run.stderr);
  for (const result of [pipe!, pty!, poll!]) assert.equal(result.isError, false, result.text);
  assert.equal(outputOf(pipe!.text), "from-the-checkout\n");
  assert.equal(outputOf(pty!.text), "20 90\n", "the PTY module loaded");
  assert.equal(headerOf(poll!.text).exit_code, "0");
  assert.match(outputOf(poll!.text), /got hi\n$/);
}

for (const host of PI_HOSTS) {
  describe(`a checkout with ${host.name}`, () => {
    it("pi install /abs/checkout records the directory and a run without -ne loads it in place", async () => {
      let cwd = "";
      const run = await runJson(host, "use the installed checkout", script, {
        extensions: [],
        noExtensions: false,
        setup: (dirs) => {
          assert.match(piInstall(host.cliPath, dirs, REPO_ROOT, join(dirs.root, "npm-cache")), /Installed /);
          const [recorded] = installedPackages(dirs) as string[];
          // Pi stores a user-scope path relative to the agent dir; it must lead back to this checkout.
          assert.equal(isAbsolute(recorded!) ? recorded : resolve(dirs.agentDir, recorded!), REPO_ROOT);
          assert.ok(!existsSync(join(dirs.agentDir, "npm")), "nothing was copied or npm-installed");
          cwd = dirs.cwd;
        },
      });
      assertDriven(run);
      assert.equal(run.tools[0]!.structuredContent.cwd, cwd, "the job ran in the user's directory, not the checkout");
    });

    it("pi remove /abs/checkout takes it out again", () => {
      const dirs = makeDirs();
      try {
        piInstall(host.cliPath, dirs, REPO_ROOT, join(dirs.root, "npm-cache"));
        assert.equal(installedPackages(dirs).length, 1);
        assert.match(piRemove(host.cliPath, dirs, REPO_ROOT), /Removed /);
        assert.deepEqual(installedPackages(dirs), []);
      } finally {
        rmSync(dirs.root, { recursive: true, force: true });
      }
    });

    /** A second copy of the checkout under `dirs.root`; it loads far enough to conflict only if its own imports resolve. */
    const secondCopy = (root: string) => {
      const copy = join(root, "second-copy");
      cpSync(join(REPO_ROOT, "src"), join(copy, "src"), { recursive: true });
      cpSync(join(REPO_ROOT, "package.json"), join(copy, "package.json"));
      cpSync(join(REPO_ROOT, "index.ts"), join(copy, "index.ts"));
      symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
      return copy;
    };

    it("two installed copies stop Pi with the conflict the README quotes", async () => {
      const run = await runJson(host, "hello", steps(), {
        extensions: [],
        noExtensions: false,
        setup: (dirs) => {
          for (const source of [REPO_ROOT, secondCopy(dirs.root)]) piInstall(host.cliPath, dirs, source, join(dirs.root, "npm-cache"));
        },
      });
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /Tool "exec_command" conflicts with /);
    });

    it("another copy installed and the checkout loaded with -e conflict too", async () => {
      const run = await runJson(host, "hello", steps(), {
        extensions: [REPO_ROOT],
        noExtensions: false,
        setup: (dirs) => {
          piInstall(host.cliPath, dirs, secondCopy(dirs.root), join(dirs.root, "npm-cache"));
        },
      });
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /Tool "exec_command" conflicts with /);
    });

    it("the same checkout installed and loaded with -e is one copy: no conflict", async () => {
      const run = await runJson(host, "use the checkout twice over", script, {
        extensions: [REPO_ROOT],
        noExtensions: false,
        setup: (dirs) => {
          piInstall(host.cliPath, dirs, REPO_ROOT, join(dirs.root, "npm-cache"));
        },
      });
      assertDriven(run);
      assert.doesNotMatch(run.stderr, /conflicts with/);
    });

    it("pi -e /abs/checkout loads it for one run without installing", async () => {
      const run = await runJson(host, "use the checkout for one run", script, { extensions: [REPO_ROOT], noExtensions: false });
      assertDriven(run);
    });
  });
}
