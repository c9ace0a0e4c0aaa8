/**
 * The held input wake's races, forced: during a run, a job waits at a prompt long enough for its input
 * wake (held for the run); then its prompt ends (it "times out" on SIGUSR1) and it prints more or goes
 * on silently, or a person starts typing into it (a hidden prompt prints nothing); only then does the
 * run settle. The wake must not go out. Used by the runtime test and its repeated runs beside CPU burners.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { InputWakeJob, WakeBatch } from "../../src/core/completion/wake-delivery.ts";
import type { JobReport } from "../../src/core/job/job-snapshot.ts";
import { type ExecRequest, prepareExec } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";

/** A prompt a SIGUSR1 ends (as a timeout would), then `printed` (nothing when empty) and a touch of `moved`. */
const PROMPT = (printed: string, moved: string) => `
import signal, sys, time
def moved(*_): raise InterruptedError
signal.signal(signal.SIGUSR1, moved)
print("Continue? [y/N] ", end="", flush=True)
try: sys.stdin.readline()
except InterruptedError: print(${JSON.stringify(printed)}, end="", flush=True)
open(${JSON.stringify(moved)}, "w").close()
time.sleep(60)
`;

/**
 * The race's frame: a run starts, `request` starts a job with an exit wake, its input wake is held for
 * the run, then `meanwhile` (what happens before the settle; what it returns runs after the settle),
 * then the run settles. Returns the input wakes the settle sent; the job is killed after.
 */
async function settleAfter(
  runtime: ExecRuntime,
  batches: WakeBatch[],
  request: ExecRequest,
  meanwhile: (started: JobReport, id: number) => Promise<(() => void) | undefined>,
): Promise<InputWakeJob[]> {
  const from = batches.length;
  runtime.completions.runStarted();
  const started = await runtime.exec(request, { onExit: "wake" });
  const id = runningId(started)!;
  try {
    await waitFor(() => runtime.completions.waiting === 1, "the input wake, held for the run", 20_000);
    const afterSettle = await meanwhile(started, id);
    runtime.completions.runSettled();
    afterSettle?.();
    return batches.slice(from).flatMap((batch) => batch.inputs ?? []);
  } finally {
    await runtime.kill(id, "SIGKILL");
  }
}

/**
 * Runs the race once in `dir` on `runtime` (input wakes after 2 s: `PI_UNIFIED_EXEC_INPUT_WAKE_S=2`):
 * the prompt ends before the settle. The input wakes the settle sent.
 */
export async function heldWakeAfterPromptEnds(
  runtime: ExecRuntime,
  batches: WakeBatch[],
  dir: string,
  printed: string,
): Promise<InputWakeJob[]> {
  const script = join(dir, `prompt-${Math.random().toString(36).slice(2)}.py`);
  const pidFile = `${script}.pid`;
  const moved = `${script}.moved`;
  writeFileSync(script, PROMPT(printed, moved));
  const request = prepareExec({ cmd: `echo $$ > ${pidFile}; exec python3 ${script}`, yield_time_ms: 250 }, dir, process.env);
  return settleAfter(runtime, batches, request, async (started) => {
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGUSR1");
    await waitFor(() => existsSync(moved), "the prompt to end");
    if (printed) await waitFor(() => readFileSync(started.job.logPath, "utf8").includes(printed), "the job's new output");
    return undefined;
  });
}

/**
 * The person's race on `runtime` (input wakes after 2 s, a PTY): a hidden `read -s` prompt's wake is
 * held for the run and a person types half a password into it before the settle. The input wakes the
 * settle sent.
 */
export async function heldWakeWhilePersonTypes(runtime: ExecRuntime, batches: WakeBatch[]): Promise<InputWakeJob[]> {
  const cmd = "read -s -p 'Password: ' secret; sleep 30";
  const request = prepareExec({ cmd, tty: true, yield_time_ms: 250 }, process.cwd(), process.env);
  return settleAfter(runtime, batches, request, async (_started, id) => {
    const taken = runtime.typeInto(id);
    if (!("typing" in taken)) throw new Error(`the person could not type into session ${id}: ${taken.refused}`);
    await taken.typing.type(Buffer.from("hunt"));
    return () => taken.typing.end();
  });
}
