import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ExecRequestError, UnknownJobError } from "../../../src/core/errors.ts";
import { prepareExec } from "../../../src/core/request.ts";
import { ExecRuntime, type JobReport } from "../../../src/core/runtime.ts";
import { pidsIn, processAlive, waitFor } from "../../helpers/processes.ts";

const request = (cmd: string, yieldMs = 2_000, extra: { workdir?: string; shell?: string } = {}) =>
  prepareExec({ cmd, yield_time_ms: yieldMs, ...extra }, process.cwd(), process.env);
const output = (report: JobReport) => report.text;
const poll = { ms: 10_000 };

describe("ExecRuntime", () => {
  it("reports a quick command's exit directly, without a session id", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("echo hi; exit 3"));
    assert.equal(report.sessionId, undefined);
    assert.equal(report.exit?.exitCode, 3);
    assert.equal(output(report), "hi\n");
    assert.equal(report.waitEnd, "exited");
    assert.deepEqual(runtime.jobs(), [], "an early exit is never registered");
    await runtime.shutdown();
  });

  it("returns a session id at the end of the window; a poll gets only the new output and the exit, once", async () => {
    const runtime = new ExecRuntime();
    const first = await runtime.exec(request("echo start; sleep 0.6; echo end", 250));
    assert.equal(first.sessionId, first.jobId);
    assert.equal(first.exit, undefined);
    assert.equal(output(first), "start\n");
    assert.ok(first.wallMs >= 240 && first.wallMs < 2_000, `wall ${first.wallMs}`);
    const second = await runtime.interact(first.sessionId!, {}, poll);
    assert.equal(second.exit?.exitCode, 0);
    assert.equal(output(second), "end\n");
    assert.equal(second.outputBytesTotal, 10);
    assert.ok(second.wallMs < 5_000, "the poll returned at the exit, not at its deadline");
    await assert.rejects(runtime.interact(first.sessionId!, {}, poll), UnknownJobError);
    await runtime.shutdown();
  });

  it("reports a job that exits between calls on the next poll, at once", async () => {
    const runtime = new ExecRuntime();
    const first = await runtime.exec(request("sleep 0.4; echo done", 250));
    await waitFor(() => runtime.jobs().every((job) => job.exit !== undefined), "the job to exit");
    const t0 = performance.now();
    const second = await runtime.interact(first.sessionId!, {}, poll);
    assert.ok(performance.now() - t0 < 200);
    assert.equal(second.exit?.exitCode, 0);
    assert.equal(output(second), "done\n");
    await runtime.shutdown();
  });

  it("allocates ids from 1 at spawn; an early exit spends its id without exposing it", async () => {
    const runtime = new ExecRuntime();
    const quick = await runtime.exec(request("true"));
    assert.equal(quick.jobId, 1);
    const slow = await runtime.exec(request("sleep 5", 250));
    assert.equal(slow.sessionId, 2);
    await assert.rejects(runtime.interact(1, {}, poll), UnknownJobError);
    await runtime.shutdown();
  });

  it("ends the window on abort and keeps the job addressable", async () => {
    const runtime = new ExecRuntime();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const report = await runtime.exec(request("sleep 5", 20_000), { signal: controller.signal });
    assert.equal(report.waitEnd, "aborted");
    assert.ok(report.sessionId);
    assert.equal(runtime.jobs().length, 1);
    await runtime.shutdown();
  });

  it("reports a spawn that fails asynchronously (shell gone, workdir gone) as a failure, never an empty success", async () => {
    const runtime = new ExecRuntime();
    const vanishedShell = { ...request("true"), shell: { name: "bash" as const, path: "/nonexistent/bash" } };
    const noShell = await runtime.exec(vanishedShell);
    assert.equal(noShell.exit?.exitCode, null);
    assert.match(noShell.exit?.failure ?? "", /could not start \/nonexistent\/bash in .*ENOENT/);
    const vanishedDir = { ...request("true"), cwd: "/nonexistent/dir" };
    const noDir = await runtime.exec(vanishedDir);
    assert.match(noDir.exit?.failure ?? "", /could not start .* in \/nonexistent\/dir: .*ENOENT/);
    await runtime.shutdown();
  });

  it("writes input and attaches for the input window", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(request("head -n 1; sleep 0.3", 250));
    const t0 = performance.now();
    const echoed = await runtime.interact(started.sessionId!, { input: { kind: "bytes", bytes: Buffer.from("hi\n") } }, { ms: 250 });
    assert.ok(performance.now() - t0 < 2_000);
    assert.equal(echoed.text, "hi\n");
    assert.deepEqual(echoed.input, { input: "bytes" });
    const done = await runtime.interact(started.sessionId!, {}, poll);
    assert.equal(done.exit?.exitCode, 0);
    await runtime.shutdown();
  });

  it("reports the exit of `sleep 3 & exit 0` at once", async () => {
    const runtime = new ExecRuntime();
    const report = await runtime.exec(request("sleep 3 & exit 0", 10_000));
    assert.equal(report.exit?.exitCode, 0);
    assert.ok(report.wallMs < 1_500, `took ${report.wallMs} ms`);
    await runtime.shutdown();
  });

  it("shutdown stops live jobs, TERM-ignoring ones and lingering descendants, then refuses new work", async () => {
    const runtime = new ExecRuntime();
    const live = await runtime.exec(request("echo $$; sleep 300", 300));
    const stubborn = await runtime.exec(request("trap '' TERM; sleep 300 & echo $!; wait", 300));
    const lingering = await runtime.exec(request("sleep 300 & echo $!; exit 0", 300));
    const pids = [live, stubborn, lingering].flatMap((report) => pidsIn(output(report)));
    assert.equal(pids.length, 3);
    assert.ok(pids.every(processAlive));
    const result = await runtime.shutdown();
    assert.deepEqual(result.survivors, []);
    assert.deepEqual(result.errors, []);
    assert.equal(result.terminated, 3);
    assert.equal(result.killed, 1, "only the TERM-ignoring group needed SIGKILL");
    assert.deepEqual(pids.filter(processAlive), []);
    await assert.rejects(runtime.exec(request("true")), /shutting down/);
  });
});

describe("prepareExec", () => {
  const base = mkdtempSync(join(tmpdir(), "piue-request-"));
  writeFileSync(join(base, "file.txt"), "");

  it("resolves a relative workdir against the turn cwd", () => {
    assert.equal(prepareExec({ cmd: "true", workdir: "." }, base, process.env).cwd, base);
  });

  const refusals: [string, Parameters<typeof prepareExec>[0], RegExp][] = [
    ["an empty command", { cmd: "  " }, /cmd is empty/],
    ["a NUL in the command", { cmd: "echo a\0b" }, /NUL/],
    ["a missing workdir, naming it", { cmd: "true", workdir: "nope/deeper" }, new RegExp(`workdir does not exist: ${base}/nope/deeper`)],
    ["a workdir that is a file", { cmd: "true", workdir: "file.txt" }, /workdir is not a directory/],
    ["an unsupported shell", { cmd: "true", shell: "fish" }, /Unsupported shell "fish"/],
  ];
  for (const [what, params, message] of refusals) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => prepareExec(params, base, process.env),
        (error: Error) => error instanceof ExecRequestError && message.test(error.message),
      );
    });
  }
});
