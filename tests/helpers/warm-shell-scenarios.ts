/**
 * Warm shells for the tests of `tests/unit/core/warm-shells.test.ts` and
 * `warm-shell-equivalence.test.ts` and their repeats beside CPU burners in
 * `tests/stress/warm-shells.test.ts`: a pool with a recording guard, a job's spawn spec, a handed job
 * run to its end; and the scenarios of the warm-shell equivalence (`tests/unit/core/warm-shell-equivalence.test.ts`, once;
 * `tests/stress/warm-shells.test.ts`, twice beside CPU burners): every pipe-mode behaviour a job
 * shows (exit codes, signals, `$$`, `ps -o args=`, stdin, Ctrl-C, Ctrl-D, process groups, kill with
 * escalation, deadlines, cwd, environment, error prefixes, LINENO), observed so that runs compare.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { JobReport } from "../../src/core/job/job-snapshot.ts";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { JOB_MARKER_ENV } from "../../src/core/shared/constants.ts";
import { type AdoptedChild, PipeTransport } from "../../src/core/transport/pipe.ts";
import type { SpawnSpec } from "../../src/core/transport/types.ts";
import { WarmShells } from "../../src/core/transport/warm-shells.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";
import { shutDownAfter } from "./runtime.ts";

export function recordingGuard() {
  const events: string[] = [];
  return {
    events,
    started: (job: { pid: number | undefined; command: string }) => events.push(`started ${job.pid} ${job.command}`),
    leaderExited: (job: { pid: number | undefined }) => events.push(`exited ${job.pid}`),
    forgotten: (job: { pid: number | undefined }) => events.push(`forgotten ${job.pid}`),
  };
}

let jobs = 0;
/** SHLVL=1: a bash whose stdin is a socket and whose level is below 2 reads ~/.bashrc (spawned directly too). */
export function spec(cmd: string, extra: Partial<SpawnSpec> = {}): SpawnSpec {
  const env = { PATH: process.env.PATH, SHLVL: "1", [JOB_MARKER_ENV]: `t:${++jobs}` };
  return { file: "/bin/bash", args: ["-c", cmd], cwd: "/tmp", env, ...extra };
}

const pools: WarmShells[] = [];
export function pool(): { shells: WarmShells; guard: ReturnType<typeof recordingGuard> } {
  const guard = recordingGuard();
  const shells = new WarmShells(guard, true);
  pools.push(shells);
  return { shells, guard };
}
after(() => {
  for (const shells of pools) shells.shutdown();
});

/** Primes the pool with a job of `model`'s kind and waits for an idle, ready shell; its pid. */
export async function idleShell(shells: WarmShells, model: SpawnSpec = spec("true")): Promise<number> {
  assert.equal(await shells.handOver(model, "bash"), undefined, "nothing idle yet: the first job spawns");
  shells.refill();
  await waitFor(() => shells.idle?.ready === true, "a ready warm shell", 15_000);
  return shells.idle!.pid!;
}

/** Runs a job on an adopted child through the real pipe transport; its output and exit. */
export function runHanded(job: SpawnSpec, adopted: AdoptedChild) {
  let text = "";
  let exit: unknown;
  let closed = false;
  new PipeTransport(
    job,
    {
      data: (chunk) => {
        text += chunk.toString();
      },
      exit: (leader) => {
        exit = leader;
      },
      closed: () => {
        closed = true;
      },
    },
    adopted,
  );
  return waitFor(() => closed, "the job's end").then(() => ({ text, exit }));
}

/** What one scenario observed, with run-specific values (pids, the per-runtime marker) replaced. */
type Observed = Record<string, unknown>;

interface Scenario {
  name: string;
  run(runtime: ExecRuntime): Promise<Observed>;
}

// ODD_BYTES: what the hand-off's framing must carry byte for byte (bash's own quoting bytes 0x01 and 0x7f, a line break, a backslash, `=`, spaces at the ends, UTF-8).
export const env = { ...process.env, EQUIVALENCE_PROBE: "a b\tc", EMPTY_VALUE: "", ODD_BYTES: " x\n\\y=\u0001\u007f\u00e9 " };
export const exec = (
  runtime: ExecRuntime,
  cmd: string,
  extra: { yield_time_ms?: number; timeout_s?: number; workdir?: string; until_pattern?: string } = {},
) => runtime.exec(prepareExec({ cmd, yield_time_ms: 5_000, ...extra }, process.cwd(), env));
const write = (runtime: ExecRuntime, jobId: number, chars: string, yieldMs = 5_000) =>
  runtime.interact(prepareWrite({ session_id: jobId, chars, yield_time_ms: yieldMs }, env));

/** Output with the job's own pid (printed as `pid=N`) named, so runs compare. */
function normalized(report: { output: { text: string } }): string {
  return report.output.text.replace(/pid=\d+/g, "pid=<pid>");
}

function exitOf(report: JobReport) {
  const exit = report.job.exit;
  return exit && { exitCode: exit.exitCode, signal: exit.signal, failure: exit.failure, stoppedBy: exit.stoppedBy };
}

/** Starts a job that prints `ready` and keeps running; the report's id and the job's pid. */
async function started(runtime: ExecRuntime, cmd: string, extra: { timeout_s?: number } = {}) {
  const first = await exec(runtime, cmd, { yield_time_ms: 10_000, until_pattern: "^ready$", ...extra });
  const jobId = runningId(first);
  assert.ok(jobId !== undefined, `still running: ${first.output.text}`);
  return { jobId };
}

const scenarios: Scenario[] = [
  {
    name: "exit code, $0, $$, LINENO, an error's prefix, the shell level",
    async run(runtime) {
      const report = await exec(
        runtime,
        'exec 2>&1; echo "0=$0 pid=$$ line=$LINENO shlvl=$SHLVL"\nnosuch-command-xyz\necho "line=$LINENO"; exit 42',
      );
      return { exit: exitOf(report), text: normalized(report) };
    },
  },
  {
    name: "ps shows the job's argv; it leads its own session and group; its parent is Pi",
    async run(runtime) {
      const report = await exec(
        runtime,
        'ps -o args= -p $$; ps -o pgid=,sid=,ppid= -p $$ | awk -v p=$$ -v n=$PPID \'{print ($1==p) ($2==p) ($3==n)}\'; echo "ppid_is_pi=$([ "$PPID" = ' +
          process.pid +
          ' ] && echo yes)"',
      );
      return { exit: exitOf(report), text: normalized(report) };
    },
  },
  {
    name: "environment, descriptors, signal dispositions and umask",
    async run(runtime) {
      const report = await exec(
        runtime,
        // The leader's own environment as a set: a warm shell that exports it itself lists it in bash's order, without `_`.
        "grep -zv -e '^PI_UNIFIED_EXEC_JOB=' -e '^_=' /proc/$$/environ | sort -z | md5sum; env | grep -v '^PI_UNIFIED_EXEC_JOB=' | sort | md5sum; " +
          "printf '%s|' \"$EQUIVALENCE_PROBE\" \"$(printenv EMPTY_VALUE || echo unset)\" \"$ODD_BYTES\" | od -An -c; echo; grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status; ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; umask",
      );
      return { exit: exitOf(report), text: report.output.text };
    },
  },
  {
    name: "the workdir: pwd, the physical path, OLDPWD",
    async run(runtime) {
      const report = await exec(runtime, 'pwd; pwd -P; echo "old=$(printenv OLDPWD || echo unset)"', { workdir: "/tmp" });
      return { exit: exitOf(report), text: report.output.text };
    },
  },
  {
    name: "a workdir that disappears after the request was checked fails the same way",
    async run(runtime) {
      const dir = mkdtempSync(join(tmpdir(), "warm-workdir-"));
      const request = prepareExec({ cmd: "echo never", yield_time_ms: 5_000, workdir: dir }, process.cwd(), env);
      rmdirSync(dir);
      const report = await runtime.exec(request);
      return JSON.parse(JSON.stringify({ exit: exitOf(report), text: report.output.text }).replaceAll(dir, "<dir>"));
    },
  },
  {
    name: "a death by its own signal",
    async run(runtime) {
      const report = await exec(runtime, "echo before; kill -TERM $$; echo after");
      return { exit: exitOf(report), text: report.output.text };
    },
  },
  {
    name: "stdin: a line written later is read; Ctrl-D ends cat",
    async run(runtime) {
      const { jobId } = await started(runtime, 'echo ready; read -r line; echo "got:$line"; cat; echo "cat-ended:$?"');
      const second = await write(runtime, jobId, "hello world\n", 300);
      const third = await write(runtime, jobId, "rest\u0004");
      return { second: second.output.text, third: third.output.text, exit: exitOf(third) };
    },
  },
  {
    name: "Ctrl-C reaches the job's process group as SIGINT",
    async run(runtime) {
      // A foreground sleep, not `sleep 30 & wait`: a background command of a shell without job control
      // ignores SIGINT, and whether it was gone by the report made the two sides differ now and then.
      const { jobId } = await started(runtime, "trap 'echo interrupted; exit 5' INT; echo ready; while :; do sleep 0.1; done");
      const report = await write(runtime, jobId, "\u0003");
      return { text: report.output.text, exit: exitOf(report) };
    },
  },
  {
    name: "kill escalates to SIGKILL for a job that ignores SIGTERM, and reaches its group",
    async run(runtime) {
      const { jobId } = await started(runtime, "trap '' TERM; sleep 300 & echo ready; wait");
      const killed = await runtime.kill(jobId, "SIGTERM");
      return {
        signal: killed.termination.signal,
        escalated: killed.termination.escalated,
        cleanup: killed.termination.cleanup,
        exit: exitOf(killed as unknown as JobReport),
      };
    },
  },
  {
    name: "a deadline stops the job",
    async run(runtime) {
      const { jobId } = await started(runtime, "echo ready; sleep 300", { timeout_s: 1 });
      const report = await runtime.interact(prepareWrite({ session_id: jobId, yield_time_ms: 10_000 }, env));
      return { exit: exitOf(report) };
    },
  },
];

/** Runs one scenario; on the warm side, first waits for an idle shell and then proves it was used. */
async function observe(runtime: ExecRuntime, scenario: Scenario): Promise<Observed> {
  if (!runtime.warmShells.enabled) return scenario.run(runtime);
  await waitFor(() => runtime.warmShells.idle?.ready === true, "an idle warm shell", 15_000);
  const handed = runtime.warmShells.counts.handed;
  const observed = await scenario.run(runtime);
  if (scenario.name.startsWith("a workdir that disappears")) {
    assert.equal(runtime.warmShells.counts.handed, handed, "a workdir the shell cannot enter falls back to a direct spawn");
  } else {
    assert.equal(runtime.warmShells.counts.handed, handed + 1, "the job ran in the warm shell");
  }
  // Keep a shell coming for the next scenario: a call that ended starts it.
  await exec(runtime, "true");
  return observed;
}

export const keep = shutDownAfter();

/**
 * Every scenario through a runtime with warm shells on and one with them off, `rounds` times: the
 * results must be equal, and each warm run must really have used a warm shell.
 */
export async function compareAll(rounds: number) {
  const warm = keep(new ExecRuntime({ warmShells: true }));
  const direct = keep(new ExecRuntime({ warmShells: false }));
  await exec(warm, "true"); // the first command starts the first shell
  for (let round = 0; round < rounds; round++) {
    for (const scenario of scenarios) {
      // Both sides at once: each runtime has its own processes, and only the results are compared.
      const [a, b] = await Promise.all([observe(direct, scenario), observe(warm, scenario)]);
      assert.deepEqual(b, a, `${scenario.name}: warm shell on vs off`);
    }
  }
  assert.equal(warm.warmShells.counts.fallbacks, rounds, "only the missing workdir fell back");
}
