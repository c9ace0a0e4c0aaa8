/**
 * The input wake through the runtime with real jobs (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2`): a job with
 * `on_exit: "wake"` blocked on `read` wakes once with its prompt line, and the answer reaches it; a
 * job with a pattern armed wakes too; one with no wake armed never; a job a person typed into wakes
 * without its line; and the one wake again beside CPU burners.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { InputWakeJob } from "../../../src/core/completion/wake-delivery.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import type { ExecRuntime } from "../../../src/core/runtime.ts";
import { heldWakeAfterPromptEnds } from "../../helpers/held-input-wake.ts";
import { rounds, startBurners } from "../../helpers/load.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes, scratchDirectory } from "../../helpers/runtime.ts";

const SKIP = process.platform === "win32" ? "no input-wait probe on Windows" : false;
const PROMPT_JOB = "printf 'building\\nOverwrite config.json? [y/N] '; read answer; echo \"got $answer\"; sleep 30";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);

let saved: string | undefined;
before(() => {
  saved = process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
  process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = "2";
});
after(() => {
  if (saved === undefined) delete process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S;
  else process.env.PI_UNIFIED_EXEC_INPUT_WAKE_S = saved;
});

function inputsOf(batches: { inputs?: InputWakeJob[] }[]): InputWakeJob[] {
  return batches.flatMap((batch) => batch.inputs ?? []);
}

/** Starts the prompt job with `on_exit: "wake"` and waits for its one input wake; returns it and the job's id. */
async function promptWakesOnce(runtime: ExecRuntime, batches: { inputs?: InputWakeJob[] }[]) {
  const from = inputsOf(batches).length;
  const t0 = performance.now();
  const started = await runtime.exec(exec(PROMPT_JOB), { onExit: "wake" });
  const id = runningId(started)!;
  await waitFor(() => inputsOf(batches).length > from, "the input wake", 15_000);
  const took = performance.now() - t0;
  const wake = inputsOf(batches)[from]!;
  return { id, wake, took };
}

describe("the input wake with real jobs", { skip: SKIP }, () => {
  it('a job with on_exit: "wake" blocked on a prompt wakes once with the prompt line, and an answer reaches it', async () => {
    const { runtime, batches } = runtimeWithWakes();
    const { id, wake, took } = await promptWakesOnce(runtime, batches);
    assert.deepEqual(wake, { jobId: id, command: PROMPT_JOB, line: "Overwrite config.json? [y/N]", waitedMs: 2_000 });
    assert.ok(took >= 2_000, `after ${Math.round(took)} ms`);
    await quietFor(3_000);
    assert.equal(inputsOf(batches).length, 1, "once per prompt");
    const answered = await runtime.interact(prepareWrite({ session_id: id, chars: "y\n", until_pattern: "got" }, process.env));
    assert.match(answered.output.text, /got y/);
    assert.equal(batches.flatMap((batch) => batch.jobs).length, 0, "no exit wake: the job runs");
    await runtime.shutdown();
  });

  it("a job with only wake_on_pattern armed wakes for its prompt; a job with no wake armed never does", async () => {
    const { runtime, batches } = runtimeWithWakes();
    const armed = await runtime.exec(exec(PROMPT_JOB, { wake_on_pattern: "ERROR" }));
    const silent = await runtime.exec(exec(PROMPT_JOB));
    await waitFor(() => inputsOf(batches).length > 0, "the input wake", 15_000);
    await quietFor(2_500);
    assert.deepEqual(
      inputsOf(batches).map((wake) => wake.jobId),
      [runningId(armed)],
    );
    assert.notEqual(runningId(silent), undefined);
    await runtime.shutdown();
  });

  it("a job a person typed into wakes without its line", async () => {
    const { runtime, batches } = runtimeWithWakes();
    try {
      // The prompt is printed from a variable: the command itself must not hold its words.
      const started = await runtime.exec(exec('read first; P="Second"; printf "$P? "; read second; sleep 30'), { onExit: "wake" });
      const id = runningId(started)!;
      const typing = runtime.typeInto(id);
      assert.ok("typing" in typing);
      await typing.typing.type(Buffer.from("secret-answer\n"));
      typing.typing.end();
      await waitFor(() => inputsOf(batches).length > 0, "the input wake", 15_000);
      const [wake] = inputsOf(batches);
      assert.equal(wake!.withheld, true);
      assert.equal(wake!.line, undefined);
      assert.doesNotMatch(JSON.stringify(batches), /secret-answer|Second\?/);
    } finally {
      await runtime.shutdown();
    }
  });
});

describe("an input wake held during a run", { skip: SKIP }, () => {
  const dir = scratchDirectory("held-input-wake-");
  for (const [how, printed] of [
    ["prints more", "timed out, going on\n"],
    ["goes on silently", ""],
  ] as const) {
    it(`is dropped at the run's end when the prompt ended meanwhile and the job ${how}`, async () => {
      const { runtime, batches } = runtimeWithWakes();
      try {
        assert.deepEqual(await heldWakeAfterPromptEnds(runtime, batches, dir, printed), []);
        assert.equal(runtime.completions.waiting, 0);
      } finally {
        await runtime.shutdown();
      }
    });
  }

  it("a quiet `Downloading weights (step 1 of 2): ` with a wake armed never wakes for input", async () => {
    const { runtime, batches } = runtimeWithWakes();
    try {
      const started = await runtime.exec(exec("printf 'Downloading weights (step 1 of 2): '; sleep 30"), { onExit: "wake" });
      // The rule's 2 s and a probe's second, twice over: a wake would have been queued by then.
      await quietFor(5_000, () => assert.equal(runtime.completions.waiting, 0));
      assert.deepEqual(inputsOf(batches), []);
      await runtime.kill(runningId(started)!, "SIGKILL");
    } finally {
      await runtime.shutdown();
    }
  });
});

describe("the input wake beside CPU burners", { skip: SKIP }, () => {
  it("wakes exactly once per prompt with two burners running", async () => {
    const stop = startBurners(2);
    const { runtime, batches } = runtimeWithWakes();
    try {
      for (let i = 0; i < rounds(3, 1); i++) {
        const { id, wake } = await promptWakesOnce(runtime, batches);
        assert.equal(wake.line, "Overwrite config.json? [y/N]");
        await quietFor(2_500);
        assert.equal(inputsOf(batches).filter((w) => w.jobId === id).length, 1);
        await runtime.kill(id, "SIGKILL");
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });
});
