/**
 * What a person does to a job, as the model learns it, through a runtime with real jobs: from the
 * first key typed into a job its wakes never quote its output (also a wake decided before the key and
 * sent after it); an `ask_user` dialog ends with its job (exit or kill) and the call returns the exit
 * with `0 bytes`; the person's typing and disarms are told once, in the model's next result of any tool
 * on the job (a poll, a kill, a listing, `set_on_exit`). The dialog's end, 5 rounds beside CPU
 * burners: `tests/stress/person-typing.test.ts`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { AskTheUser } from "../../../src/core/job/attached-call.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import type { ExecRuntime } from "../../../src/core/runtime.ts";
import { dialogEndsWithTheJob } from "../../helpers/ask-user.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimesWithWakes } from "../../helpers/runtime.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);
const TOKEN = "tok-7f3a9c-secret";
/** The job: a silent read, then two seconds later a line that carries what was typed. */
const TOKEN_JOB = `read -s -p 'Token: ' t; echo; sleep 2; echo "stored credential $t"; sleep 300`;
const made = runtimesWithWakes();
const typist =
  (text: string): AskTheUser =>
  async (typing) => {
    await typing.type(Buffer.from(text));
    return false;
  };

describe("a job a person typed into is never quoted by a wake", () => {
  it("the token the user typed for ask_user, printed two seconds later, wakes the model without the line; nothing holds it", async () => {
    const { runtime, batches } = made();
    const id = runningId(
      await runtime.exec(
        exec(TOKEN_JOB, { tty: true, yield_time_ms: 3_000, until_pattern: "Token: ", wake_on_pattern: "stored credential" }),
      ),
    )!;
    const asked = await runtime.interact(prepareWrite({ session_id: id, ask_user: "Paste the API token" }, process.env), {
      ask: typist(`${TOKEN}\r`),
      callId: "ask",
    });
    assert.deepEqual(asked.userInput, { bytes: TOKEN.length + 1, cancelled: false });
    assert.equal(asked.job.typedInto, true, "the snapshot says so, for every wake kind");
    runtime.completions.callEnded("ask", false);
    await waitFor(() => batches.some((batch) => batch.patterns?.length), "the pattern wake", 15_000);
    const wake = batches.flatMap((batch) => batch.patterns ?? [])[0]!;
    assert.deepEqual([wake.jobId, wake.line, wake.lineWithheld], [id, "", true]);
    const poll = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.match(poll.output.text, /stored credential/, "the model reads the line with a poll");
    assert.doesNotMatch(JSON.stringify(batches), new RegExp(TOKEN), "no wake holds it");
    assert.doesNotMatch(JSON.stringify(asked), new RegExp(TOKEN), "nor the ask_user report");
    assert.equal(
      (readFileSync(poll.job.logPath, "utf8").match(new RegExp(TOKEN, "g")) ?? []).length,
      1,
      "the log: only the job's own line",
    );
  });

  it("a wake decided before the first key and sent after it goes out without the line", async () => {
    const { runtime, batches } = made();
    // The batch is decided and waits (as a wake held for a run's end would): its first send fails.
    let decided = false;
    runtime.completions.bindSender(() => {
      decided = true;
      throw new Error("not now");
    });
    const id = runningId(await runtime.exec(exec("sleep 0.3; echo 'ERROR before typing'; cat > /dev/null", { wake_on_pattern: "ERROR" })))!;
    await waitFor(() => decided, "the wake decided");
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    await taken.typing.type(Buffer.from("x\n"));
    taken.typing.end();
    runtime.completions.bindSender((batch) => batches.push(batch));
    assert.deepEqual(
      batches.flatMap((batch) => batch.patterns ?? []).map((wake) => [wake.line, wake.lineWithheld]),
      [["", true]],
    );
  });

  it("opening the dialog and sending nothing keeps the job quotable; a job nobody typed into is quoted", async () => {
    const { runtime, batches } = made();
    const id = runningId(await runtime.exec(exec("sleep 1.5; echo 'READY now'; sleep 300", { wake_on_pattern: "READY" })))!;
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    taken.typing.end(true);
    await waitFor(() => batches.some((batch) => batch.patterns?.length), "the pattern wake", 10_000);
    assert.deepEqual(
      batches.flatMap((batch) => batch.patterns ?? []).map((wake) => wake.line),
      ["READY now"],
    );
    assert.equal(runtime.snapshotOf(id)?.typedInto, undefined);
  });
});

describe("an ask_user dialog ends with its job", () => {
  for (const how of ["exits", "is killed"] as const) {
    it(`when the job ${how}, the dialog closes and the call returns the exit with 0 bytes, not cancelled (pipes and a PTY)`, async () => {
      const { runtime } = made();
      for (const tty of [false, true]) await dialogEndsWithTheJob(runtime, how, tty);
    });
  }
});

describe("a person's news reaches the model once, in its next result of any tool on the job", () => {
  async function typedInto(runtime: ExecRuntime, id: number, text: string): Promise<void> {
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    await taken.typing.type(Buffer.from(text));
    taken.typing.end();
  }

  it("a listing tells the typing once; the next poll does not", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("cat > /dev/null")))!;
    await typedInto(runtime, id, "abc\n");
    const listed = runtime.list().find((job) => job.jobId === id)!;
    assert.deepEqual(listed.userInput, { bytes: 4, cancelled: false });
    assert.equal(runtime.list().find((job) => job.jobId === id)!.userInput, undefined, "once");
    assert.equal((await runtime.interact({ jobId: id, window: { ms: 250 } })).userInput, undefined);
  });

  it("a kill tells the typing", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("cat > /dev/null")))!;
    await typedInto(runtime, id, "hello\n");
    const killed = await runtime.kill(id, "SIGTERM");
    assert.deepEqual(killed.userInput, { bytes: 6, cancelled: false });
  });

  it("set_on_exit tells the typing; a disarm from the picker is told by the next poll, once, and the wake stays disarmed", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("cat > /dev/null", { wake_on_pattern: "x" }), { onExit: "wake" }))!;
    await typedInto(runtime, id, "ab\n");
    const changed = runtime.setOnExit(id, { onExit: "wake" });
    assert.ok(changed.found);
    assert.deepEqual([changed.onExit, changed.userInput], ["already_armed", { bytes: 3, cancelled: false }]);
    assert.deepEqual(runtime.setOnExit(id, { onExit: "none" }, "user"), { found: true, onExit: "disarmed" });
    assert.deepEqual(runtime.setOnExit(id, { wakePattern: null }, "user"), { found: true, pattern: "disarmed" });
    const poll = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.deepEqual(poll.userDisarmed, ["exit_wake", "wake_on_pattern"]);
    assert.equal(poll.job.wakeArmed, false);
    assert.equal((await runtime.interact({ jobId: id, window: { ms: 250 } })).userDisarmed, undefined, "once");
  });

  it("a model's own disarm is no news", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("cat > /dev/null"), { onExit: "wake" }))!;
    assert.deepEqual(runtime.setOnExit(id, { onExit: "none" }), { found: true, onExit: "disarmed" });
    const poll = await runtime.interact({
      ...prepareWrite({ session_id: id }, process.env),
      until: { pattern: compileUntilPattern("z") },
      window: { ms: 250 },
    });
    assert.equal(poll.userDisarmed, undefined);
  });
});
