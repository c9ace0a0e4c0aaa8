/**
 * The input wake with real jobs, shared by `tests/unit/core/runtime.input-wake.test.ts` (once) and
 * `tests/stress/input-wake.test.ts` (again beside CPU burners): a job blocked on a prompt, the wake
 * after 2 s (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2` for the file), and the wakes a runtime recorded.
 */
import { after, before } from "node:test";
import type { InputWakeJob } from "../../src/core/completion/wake-delivery.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";

export const SKIP_WITHOUT_PROBE = process.platform === "win32" ? "no input-wait probe on Windows" : false;
export const PROMPT_JOB = "printf 'building\\nOverwrite config.json? [y/N] '; read answer; echo \"got $answer\"; sleep 30";

export const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);

/** Sets `PI_UNIFIED_EXEC_INPUT_WAKE_S=2` for the file's tests, and restores it after. */
export function inputWakeAfterTwoSeconds(): void {
  let saved: string | undefined;
  before(() => {
    saved = process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
    process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = "2";
  });
  after(() => {
    if (saved === undefined) delete process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
    else process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = saved;
  });
}

export function inputsOf(batches: { inputs?: InputWakeJob[] }[]): InputWakeJob[] {
  return batches.flatMap((batch) => batch.inputs ?? []);
}

/** Starts the prompt job with `on_exit: "wake"` and waits for its one input wake; returns it and the job's id. */
export async function promptWakesOnce(runtime: ExecRuntime, batches: { inputs?: InputWakeJob[] }[]) {
  const from = inputsOf(batches).length;
  const t0 = performance.now();
  const started = await runtime.exec(exec(PROMPT_JOB), { onExit: "wake" });
  const id = runningId(started)!;
  await waitFor(() => inputsOf(batches).length > from, "the input wake", 15_000);
  const took = performance.now() - t0;
  const wake = inputsOf(batches)[from]!;
  return { id, wake, took };
}
