/**
 * A job handed to a warm shell is the same job as one spawned directly, as far as anything can
 * observe: every pipe-mode scenario below (exit codes, signals, `$$`, `ps -o args=`, stdin, Ctrl-C,
 * Ctrl-D, process groups, kill with escalation, deadlines, cwd, environment, error prefixes, LINENO)
 * runs through a runtime with warm shells on and one with them off, and the results must be equal.
 * The warm side also proves each scenario really ran in a warm shell (the counter moved and the job's
 * pid is the idle shell's). Real processes through the real runtime; two rounds beside CPU burners
 * in `tests/stress/warm-shells.test.ts`. The scenarios: `tests/helpers/warm-shell-scenarios.ts`.
 * The leader's own `/proc/<pid>/environ` is compared as a set without `_` (a warm shell that exports
 * the environment itself lists it in bash's order and drops `_`), and byte for byte where the
 * environment takes the `env -i` path.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { waitFor } from "../../helpers/processes.ts";
import { compareAll, env, exec, keep } from "../../helpers/warm-shell-scenarios.ts";

/** `cmd`'s output with `jobEnv`, spawned directly and then handed to a warm shell started for that environment. */
async function bothWays(jobEnv: NodeJS.ProcessEnv, cmd: string): Promise<[string, string]> {
  const observed: string[] = [];
  for (const warmShells of [false, true]) {
    const runtime = keep(new ExecRuntime({ warmShells }));
    const run = () => runtime.exec(prepareExec({ cmd, yield_time_ms: 5_000 }, process.cwd(), jobEnv));
    await run(); // the first command starts the first shell, for this environment
    if (warmShells) await waitFor(() => runtime.warmShells.idle?.ready === true, "an idle warm shell", 15_000);
    const handed = runtime.warmShells.counts.handed;
    observed.push((await run()).output.text);
    if (warmShells) assert.equal(runtime.warmShells.counts.handed, handed + 1, "the job ran in the warm shell");
  }
  return observed as [string, string];
}

describe("warm shells are indistinguishable from direct spawns", () => {
  it("every pipe scenario gives the same results with warm shells on and off", async () => {
    await compareAll(1);
  });

  it("a job handed to the warm shell runs as the shell's own pid", async () => {
    const runtime = keep(new ExecRuntime({ warmShells: true }));
    await exec(runtime, "true");
    await waitFor(() => runtime.warmShells.idle?.ready === true, "an idle warm shell", 15_000);
    const idle = runtime.warmShells.idle?.pid;
    const report = await exec(runtime, "echo $$");
    assert.equal(report.output.text, `${idle}\n`);
  });

  it("an environment bash cannot export as given goes through env -i: the leader's environment is byte for byte the direct spawn's", async () => {
    // An exported function's name is no shell identifier, and bash keeps SHELLOPTS for itself.
    const odd = { ...env, "BASH_FUNC_probe%%": "() {  echo from-function\n}", SHELLOPTS: "braceexpand:hashall" };
    const [direct, warm] = await bothWays(odd, "grep -zv '^PI_UNIFIED_EXEC_JOB=' /proc/$$/environ | md5sum; probe; echo \"$SHELLOPTS\"");
    assert.match(direct, /from-function\n/);
    assert.equal(warm, direct);
  });

  it("without SHLVL in Pi's environment, the job's shell level and environment are the direct spawn's", async () => {
    const withoutLevel: NodeJS.ProcessEnv = { ...env };
    delete withoutLevel.SHLVL;
    const [direct, warm] = await bothWays(withoutLevel, "echo \"shlvl=$SHLVL\"; env | grep -v '^PI_UNIFIED_EXEC_JOB=' | sort | md5sum");
    assert.match(direct, /^shlvl=1\n/);
    assert.equal(warm, direct);
  });
});
