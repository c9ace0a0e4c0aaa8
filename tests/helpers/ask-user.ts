/**
 * A person typing through `ask_user`, one round each: a dialog that ends with its job
 * (`tests/unit/core/person-news.test.ts`, on pipes and a PTY) and keys into a raw-mode program
 * (`user-typing.test.ts`); five rounds beside CPU burners in `tests/stress/person-typing.test.ts`.
 */
import assert from "node:assert/strict";
import type { AskTheUser } from "../../src/core/job/attached-call.ts";
import { compileUntilPattern } from "../../src/core/patterns/line-pattern.ts";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { waitFor } from "./processes.ts";
import { runningId } from "./reports.ts";

/** `promise`, or a failure naming `what` after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A person who never answers: the dialog stays open until `typing.closed` fires. */
const waits: AskTheUser = (typing) =>
  new Promise((resolve) => typing.closed.addEventListener("abort", () => resolve(true), { once: true }));

/**
 * A job the model hands to the person with `ask_user` ends while the dialog is open (it exits, or
 * the person kills it from the picker): the dialog closes and the call returns the exit with 0
 * bytes typed, not cancelled.
 */
export async function dialogEndsWithTheJob(runtime: ExecRuntime, how: "exits" | "is killed", tty: boolean, round = 0): Promise<void> {
  const script = how === "exits" ? "sleep 0.8; echo bye; exit 4" : "sleep 300";
  const id = runningId(await runtime.exec(prepareExec({ cmd: script, yield_time_ms: 250, tty }, process.cwd(), process.env)))!;
  const call = runtime.interact(prepareWrite({ session_id: id, ask_user: "Your answer?" }, process.env), { ask: waits });
  if (how === "is killed") {
    await waitFor(() => runtime.snapshotOf(id)?.userTyping === true, "the dialog open");
    void runtime.kill(id, "SIGTERM", undefined, "user");
  }
  const report = await within(call, 15_000, "the call's return after the job's end");
  assert.ok(report.job.exit, `round ${round}: the exit`);
  if (how === "exits") assert.equal(report.job.exit.exitCode, 4);
  else assert.equal(report.job.exit.stoppedBy, "user");
  assert.deepEqual(report.userInput, { bytes: 0, cancelled: false });
}

/**
 * Keys a person types through `ask_user` into a raw-mode program (`stty raw -echo; cat -v` on a
 * PTY) arrive, each of them, in order: plain letters, Ctrl-C, an arrow key, Ctrl-Z.
 */
export async function keysReachARawModeProgram(runtime: ExecRuntime, run = 0): Promise<void> {
  const request = prepareExec({ cmd: "stty raw -echo; cat -v; sleep 300", tty: true, yield_time_ms: 1_000 }, process.cwd(), process.env);
  const id = runningId(await runtime.exec(request))!;
  const keys = ["a", "\x03", "\x1b[A", "b", "\x1a", "c"];
  const report = await runtime.interact(
    {
      ...prepareWrite({ session_id: id, ask_user: "press keys" }, process.env),
      window: { ms: 10_000 },
      until: { pattern: compileUntilPattern("\\^Zc") },
    },
    {
      ask: async (typing) => {
        for (const key of keys) await typing.type(Buffer.from(key));
        return false;
      },
    },
  );
  assert.match(report.output.text, /a\^C\^\[\[Ab\^Zc/, `run ${run}: ${JSON.stringify(report.output.text)}`);
}
