/**
 * The user types into a job, through a runtime with real jobs: from the picker (`typeInto`) and for
 * the model (`ask_user`, the asking stood in for by a function that types as a person would). One
 * typist at a time; the model polls but never writes meanwhile; what was typed is a count to the
 * model and nowhere else — not a report, a formatted result, a wake or the log. Beside CPU burners:
 * `tests/stress/person-typing.test.ts`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { AskTheUser } from "../../../src/core/job/attached-call.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { keysReachARawModeProgram } from "../../helpers/ask-user.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimesWithWakes, wakesSettled } from "../../helpers/runtime.ts";
import { PASSPHRASE_PROMPT } from "../../helpers/secrets.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);
const until = (pattern: string, ms = 10_000) => ({ window: { ms }, until: { pattern: compileUntilPattern(pattern) } });
const SECRET = "hunter2-correct-horse";
const made = runtimesWithWakes();
/** A person who types `text` (and Enter) into whatever they are asked. */
const typist =
  (text: string | undefined): AskTheUser =>
  async (typing) => {
    if (text === undefined) return true;
    await typing.type(Buffer.from(text));
    return false;
  };

describe("the user types into a job from the picker", () => {
  it("a Python REPL the model started: the user's print(6*7) gives 42 to the model's next poll, with the count", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("python3 -q", { tty: true, yield_time_ms: 3_000, until_pattern: "^>>> $" })))!;
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    await taken.typing.type(Buffer.from("print(6*7)\r"));
    taken.typing.end();
    const poll = await runtime.interact({ jobId: id, ...until("^42") });
    assert.match(poll.output.text, /^42$/m);
    assert.deepEqual(poll.userInput, { bytes: 11, cancelled: false });
    const next = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(next.userInput, undefined, "told once");
  });

  it("one typist at a time: the model's write, resize and kill are refused and nothing is written; polls and listings go on", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("cat -v", { tty: true })))!;
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    assert.deepEqual(runtime.typeInto(id), { refused: "typing" });
    const refusal = new RegExp(`the user is typing into session ${id}; poll it`);
    await assert.rejects(runtime.interact(prepareWrite({ session_id: id, chars: "model-text\r" }, process.env)), refusal);
    await assert.rejects(runtime.interact(prepareWrite({ session_id: id, cols: 100 }, process.env)), refusal);
    await assert.rejects(runtime.kill(id, "SIGTERM"), refusal);
    const poll = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(poll.job.userTyping, true);
    assert.equal(runtime.list().find((job) => job.jobId === id)?.userTyping, true);
    await taken.typing.type(Buffer.from("typed\r"));
    taken.typing.end();
    const after = await runtime.interact({
      ...prepareWrite({ session_id: id, chars: "model-after\r" }, process.env),
      ...until("model-after"),
    });
    assert.doesNotMatch(after.output.text, /model-text/, "the refused write was never sent");
    assert.match(after.output.text, /typed/);
    assert.equal(after.job.userTyping, undefined);
  });

  it("a job that ended cannot be typed into", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec("sleep 0.5")))!;
    await waitFor(() => runtime.jobs().find((job) => job.id === id)?.exit !== undefined, "the exit");
    assert.deepEqual(runtime.typeInto(id), { refused: "exited" });
    assert.deepEqual(runtime.typeInto(999), { refused: "unknown" });
  });

  it("while the user types, the job's wake_on_pattern does not fire on what their typing makes it print", async () => {
    const { runtime, batches } = made();
    const id = runningId(await runtime.exec(exec("cat", { wake_on_pattern: "READY" })))!;
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    await taken.typing.type(Buffer.from("READY\n"));
    // cat's copy of the line has been read (and tested) by the time the count is read.
    await waitFor(() => runtime.snapshotOf(id)!.outputBytesTotal >= "READY\n".length, "cat's copy of the line");
    await wakesSettled(runtime);
    taken.typing.end();
    assert.deepEqual(batches, []);
  });
});

describe("the reply to the user's typing", () => {
  for (const tty of [false, true]) {
    it(`what the job prints back at once (an echo) never wakes the model, on a ${tty ? "PTY" : "pipe"}; later lines do, unquoted`, async () => {
      const { runtime, batches } = made();
      const script = 'IFS= read -r line; echo "you said $line"; sleep 2; echo READY; sleep 300';
      const id = runningId(await runtime.exec(exec(script, { tty, wake_on_pattern: `${SECRET}|READY` })))!;
      const taken = runtime.typeInto(id);
      assert.ok("typing" in taken);
      // What the one-line input does: the line, then the hold ends at once (before the reply arrives).
      await taken.typing.type(Buffer.from(`my password is ${SECRET}${tty ? "\r" : "\n"}`));
      taken.typing.end();
      await waitFor(() => batches.length > 0, "the later line's wake", 10_000);
      await wakesSettled(runtime);
      const wakes = batches.flatMap((batch) => batch.patterns ?? []);
      // One wake and nothing counted before it: the reply (an echo of the secret) was not tested, the line after it was.
      assert.deepEqual(
        wakes.map((wake) => [wake.line, wake.lineWithheld, wake.more]),
        [["", true, 0]],
        "a job typed into is never quoted",
      );
    });
  }

  it("a model write still being sent stops when the user takes the job, and the user's keys arrive in time", async () => {
    const { runtime } = made();
    // A reader that reads nothing for a second, then slowly: the model's 2 MiB fill its stdin.
    const id = runningId(
      await runtime.exec(exec("sleep 1; while IFS= read -r line; do case $line in *USER*) echo got-user;; esac; done")),
    )!;
    const write = runtime.interact({
      ...prepareWrite({ session_id: id, chars: `${"m".repeat(1023)}\n`.repeat(2048) }, process.env),
      window: { ms: 3_000 },
    });
    await quietFor(300);
    const taken = runtime.typeInto(id);
    assert.ok("typing" in taken);
    const started = performance.now();
    await taken.typing.type(Buffer.from("USER line\n"));
    assert.equal(taken.typing.bytes, 10, "every typed byte went in");
    taken.typing.end();
    const written = await write;
    assert.match(written.input?.failure ?? "", /the user took over the job's keyboard/);
    assert.ok((written.input?.refusedBytes ?? 0) > 0);
    const poll = written.output.text.includes("got-user")
      ? written
      : await runtime.interact({ jobId: id, window: { ms: 10_000 }, until: { pattern: compileUntilPattern("got-user") } });
    assert.match(poll.output.text, /got-user/);
    assert.ok(performance.now() - started < 5_000, "the user's line did not wait behind the whole write");
  });
});

describe("ask_user: the model hands a prompt to the user", () => {
  it("a read -s passphrase: the job reads exactly what was typed; the model gets the count, and no report, result or log holds the secret", async () => {
    const { runtime } = made();
    const started = await runtime.exec(exec(PASSPHRASE_PROMPT, { tty: true, yield_time_ms: 3_000, until_pattern: "Passphrase: " }));
    const id = runningId(started)!;
    const report = await runtime.interact(
      { ...prepareWrite({ session_id: id, ask_user: "Enter the passphrase for the deploy key", until_pattern: "^len=" }, process.env) },
      { ask: typist(`${SECRET}\r`), callId: "ask-1" },
    );
    const sum = (await import("node:crypto")).createHash("sha256").update(SECRET).digest("hex").slice(0, 16);
    assert.match(report.output.text, new RegExp(`len=${SECRET.length} sum=${sum}`), "the job read exactly what was typed");
    assert.deepEqual(report.userInput, { bytes: SECRET.length + 1, cancelled: false });
    const result = jobResult(report);
    assert.match((result.content[0] as { text: string }).text, new RegExp(`user_input: ${SECRET.length + 1} bytes`));
    for (const where of [JSON.stringify(report), JSON.stringify(result), readFileSync(report.job.logPath, "utf8")]) {
      assert.doesNotMatch(where, /hunter2|correct-horse/);
    }
  });

  it("a cancelled question writes nothing and says 0 bytes (cancelled)", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec(PASSPHRASE_PROMPT, { tty: true, yield_time_ms: 3_000, until_pattern: "Passphrase: " })))!;
    const report = await runtime.interact(prepareWrite({ session_id: id, ask_user: "Passphrase?" }, process.env), {
      ask: typist(undefined),
    });
    assert.deepEqual(report.userInput, { bytes: 0, cancelled: true });
    assert.match((jobResult(report).content[0] as { text: string }).text, /user_input: 0 bytes \(cancelled\)/);
    assert.doesNotMatch(report.output.text, /len=/, "the job still waits for its answer");
  });

  it("works on a pipe job too, and is refused where nobody can be asked, touching nothing", async () => {
    const { runtime } = made();
    const id = runningId(await runtime.exec(exec('read -r line; echo "got $(printf %s "$line" | wc -c) chars"; sleep 300')))!;
    await assert.rejects(
      runtime.interact(prepareWrite({ session_id: id, ask_user: "Your name?" }, process.env)),
      /ask_user needs Pi's interactive terminal or an RPC client/,
    );
    const report = await runtime.interact(
      { ...prepareWrite({ session_id: id, ask_user: "Your name?" }, process.env), ...until("got") },
      { ask: typist("Ada\n") },
    );
    assert.match(report.output.text, /got 3 chars/);
    assert.deepEqual(report.userInput, { bytes: 4, cancelled: false });
  });

  it("refuses ask_user beside chars, chars_b64, a resize or yield_until, and outside 1–300 characters", () => {
    for (const extra of [{ chars: "x" }, { chars_b64: "eA==" }, { cols: 80 }, { rows: 20 }, { yield_until: "2030-01-01T00:00:00Z" }]) {
      assert.throws(
        () => prepareWrite({ session_id: 1, ask_user: "Type it", ...extra }, process.env),
        /ask_user cannot go with .*Nothing was asked or written/,
      );
    }
    assert.throws(() => prepareWrite({ session_id: 1, ask_user: "" }, process.env), /ask_user is 0 characters long/);
    assert.throws(() => prepareWrite({ session_id: 1, ask_user: "x".repeat(301) }, process.env), /ask_user is 301 characters long/);
    assert.equal(prepareWrite({ session_id: 1, ask_user: "é".repeat(300) }, process.env).askUser?.question.length, 300);
  });

  it('accepts chars: "" and chars_b64: "", the defaults models send with every call', () => {
    for (const extra of [{ chars: "" }, { chars_b64: "" }, { chars: "", chars_b64: "" }]) {
      const request = prepareWrite({ session_id: 1, ask_user: "Type it", ...extra }, process.env);
      assert.deepEqual([request.askUser?.question, request.input], ["Type it", undefined]);
    }
  });

  it("every key reaches a raw-mode program in order", async () => {
    const { runtime } = made();
    await keysReachARawModeProgram(runtime);
  });
});
