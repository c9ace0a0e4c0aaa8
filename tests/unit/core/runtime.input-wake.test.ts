/**
 * The input wake through the runtime with real jobs (`PI_UNIFIED_EXEC_INPUT_WAKE_S=2`): a job with
 * `on_exit: "wake"` blocked on `read` wakes once with its prompt line, and the answer reaches it; a
 * job with a pattern armed wakes too; one with no wake armed never; a job a person typed into wakes
 * without its line; a wake held during a run whose prompt ended meanwhile never goes out; a quiet line
 * ending in `:` never wakes. Once per prompt is the rule's (`input-wakes.test.ts`, on a stepped clock):
 * here the runtime settles with no wake pending. Beside CPU burners: `tests/stress/input-wake.test.ts`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { prepareWrite } from "../../../src/core/request/request.ts";
import { heldWakeAfterPromptEnds, heldWakeWhilePersonTypes } from "../../helpers/held-input-wake.ts";
import {
  exec,
  inputsOf,
  inputWakeAfterTwoSeconds,
  PROMPT_JOB,
  promptWakesOnce,
  SKIP_WITHOUT_PROBE as SKIP,
} from "../../helpers/input-wake.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";
import { pendingWakes, runtimeWithWakes, scratchDirectory, wakesSettled } from "../../helpers/runtime.ts";

inputWakeAfterTwoSeconds();
const SKIP_PTY = { skip: SKIP_WITHOUT_PTY };

describe("the input wake with real jobs", { skip: SKIP }, () => {
  it('a job with on_exit: "wake" blocked on a prompt wakes once with the prompt line, and an answer reaches it', async () => {
    const { runtime, batches } = runtimeWithWakes();
    const { id, wake, took } = await promptWakesOnce(runtime, batches);
    assert.deepEqual(wake, { jobId: id, command: PROMPT_JOB, line: "Overwrite config.json? [y/N]", waitedMs: 2_000 });
    assert.ok(took >= 2_000, `after ${Math.round(took)} ms`);
    await wakesSettled(runtime);
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
    // Both prompts wait from the same moment: by the armed job's wake, the other's would be due too.
    await waitFor(() => inputsOf(batches).length > 0, "the input wake", 15_000);
    await wakesSettled(runtime);
    assert.equal(pendingWakes(runtime), 0);
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
      await waitFor(() => readFileSync(started.job.logPath, "utf8").includes("step 1 of 2"), "the quiet line");
      // A real prompt started after the line is out: the probe asks both at each tick, so by the
      // prompt's wake the quiet line has waited at least as long and would have woken too.
      const { id } = await promptWakesOnce(runtime, batches);
      await wakesSettled(runtime);
      assert.deepEqual(
        inputsOf(batches).map((wake) => wake.jobId),
        [id],
      );
      await runtime.kill(runningId(started)!, "SIGKILL");
    } finally {
      await runtime.shutdown();
    }
  });

  it("a wake held during a run for a hidden prompt never goes out once a person types into it before the settle", SKIP_PTY, async () => {
    const { runtime, batches } = runtimeWithWakes();
    try {
      assert.deepEqual(await heldWakeWhilePersonTypes(runtime, batches), [], "no notice while the person types");
    } finally {
      await runtime.shutdown();
    }
  });
});
