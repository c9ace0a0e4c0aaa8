import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import type { Job } from "../../../src/core/job/job.ts";
import { waitForExit } from "../../../src/core/job/job.ts";
import { LOG_PENDING_BYTES, LogDirectory, logConfig } from "../../../src/core/log/job-log.ts";
import { killGroup, StartedJobs, statusOf, untilExit } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";

const jobs = new StartedJobs();
const start = (command: string) => jobs.start(command);
const text = (job: Job) => job.takeOutput().text;
/** A send's window: generous, the writes here are small. */
const soon = () => performance.now() + 10_000;

describe("Job over pipes", () => {
  it("reports output and the exit code", async () => {
    const job = start("echo out; exit 7");
    assert.equal(await untilExit(job), "exited");
    assert.deepEqual(job.exit, { exitCode: 7, signal: null });
    assert.equal(text(job), "out\n");
    assert.equal(statusOf(job), "exited");
  });

  it("merges stderr into the same stream, in the order it was read", async () => {
    // Two pipes: what both hold when a busy machine lets the reader run may be read in either order
    // (a 50 ms pause between the writes was not enough), so each line waits until the one before it was read.
    const dir = mkdtempSync(join(tmpdir(), "job-merge-"));
    const gate = (name: string) => `while [ ! -e '${join(dir, name)}' ]; do sleep 0.01; done`;
    try {
      const job = start(`echo one; ${gate("a")}; echo two >&2; ${gate("b")}; echo three`);
      await waitFor(() => job.previewText().includes("one"), "the first line");
      writeFileSync(join(dir, "a"), "");
      await waitFor(() => job.previewText().includes("two"), "the second line");
      writeFileSync(join(dir, "b"), "");
      await untilExit(job);
      assert.equal(text(job), "one\ntwo\nthree\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leads its own process group", async () => {
    const job = start("ps -o pgid= -p $$; sleep 0.2");
    await waitFor(() => job.outputBytesTotal > 0, "the pgid line");
    assert.equal(Number(text(job).trim()), job.pid);
    await untilExit(job);
  });

  it("keeps stdin open (a reader blocks instead of seeing EOF)", async () => {
    const job = start("read line; echo got:$line");
    const end = await waitForExit(job, performance.now() + 400);
    assert.equal(end, "deadline");
    assert.equal(statusOf(job), "running");
    killGroup(job);
    await untilExit(job);
  });

  it("reports a death by signal as 128 + n, with the signal name", async () => {
    const job = start("kill -TERM $$");
    await untilExit(job);
    assert.deepEqual(job.exit, { exitCode: 143, signal: "SIGTERM" });
  });

  it("collects output written just before the exit", async () => {
    const job = start("head -c 200000 /dev/zero | tr '\\0' x; echo; echo last");
    await untilExit(job);
    const output = text(job);
    assert.equal(job.outputBytesTotal, 200_000 + 1 + 5);
    assert.ok(output.endsWith("\nlast\n"));
  });

  it("counts every byte and reports quiet time", async () => {
    const job = start("printf abc; sleep 0.3");
    await waitFor(() => job.outputBytesTotal === 3, "three bytes");
    await waitFor(() => job.quietMs() >= 150, "quiet time to grow");
    await untilExit(job);
  });

  it("reports a failed spawn as an exit with a failure message", async () => {
    const job = jobs.start("true", { program: "/nonexistent/shell" });
    assert.equal(await untilExit(job), "exited");
    assert.equal(job.exit?.exitCode, null);
    assert.match(job.exit?.failure ?? "", /could not start \/nonexistent\/shell in .*ENOENT/);
    assert.equal(job.pid, undefined);
  });
});

describe("waitForExit", () => {
  it("returns as soon as the job exits, not at the deadline", async () => {
    const job = start("sleep 0.2");
    const t0 = performance.now();
    assert.equal(await waitForExit(job, t0 + 20_000), "exited");
    assert.ok(performance.now() - t0 < 5_000);
  });

  it("is not ended by output arriving", async () => {
    const job = start("for i in 1 2 3 4 5; do echo $i; sleep 0.05; done; sleep 5");
    const t0 = performance.now();
    assert.equal(await waitForExit(job, t0 + 600), "deadline");
    assert.ok(performance.now() - t0 >= 590);
    assert.equal(text(job), "1\n2\n3\n4\n5\n");
    killGroup(job);
    await untilExit(job);
  });

  it("ends on abort without touching the job", async () => {
    const job = start("sleep 5");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    assert.equal(await waitForExit(job, performance.now() + 20_000, { signal: controller.signal }), "aborted");
    assert.equal(statusOf(job), "running");
    assert.equal(
      await waitForExit(job, performance.now() + 100, { signal: controller.signal }),
      "aborted",
      "an aborted signal ends at once",
    );
    killGroup(job);
    assert.equal(await untilExit(job), "exited");
  });

  it("prefers the exit when the job is already gone", async () => {
    const job = start("true");
    await untilExit(job);
    const controller = new AbortController();
    controller.abort();
    assert.equal(await waitForExit(job, performance.now() - 1, { signal: controller.signal }), "exited");
  });
});

describe("Job input", () => {
  it("writes bytes to stdin exactly (cat echoes them)", async () => {
    const job = start("cat");
    assert.deepEqual(await job.send({ kind: "bytes", bytes: Buffer.from("hello\n") }, soon()), { input: "bytes", sentBytes: 6 });
    await waitFor(() => job.outputBytesTotal === 6, "the echo");
    assert.equal(text(job), "hello\n");
    killGroup(job);
    await untilExit(job);
  });

  it("delivers binary bytes, NUL and 0xFF included", async () => {
    const job = start("od -An -tx1 -v");
    await job.send({ kind: "bytes", bytes: Buffer.from([0x00, 0xff, 0x0a, 0x1b, 0x80]) }, soon());
    await job.send({ kind: "eof" }, soon());
    await untilExit(job);
    assert.equal(text(job).trim(), "00 ff 0a 1b 80");
  });

  it("closes stdin on EOF, and a later write says so", async () => {
    const job = start("cat; echo eof-seen");
    await job.send({ kind: "bytes", bytes: Buffer.from("line\n") }, soon());
    assert.deepEqual(await job.send({ kind: "eof" }, soon()), { input: "eof", sentBytes: 0 });
    await untilExit(job);
    assert.equal(text(job), "line\neof-seen\n");
    assert.match((await job.send({ kind: "bytes", bytes: Buffer.from("late") }, soon())).failure ?? "", /the job has already exited/);
  });

  it("interrupts the process group on Ctrl-C", async () => {
    const job = start("trap 'echo interrupted; exit 7' INT; echo ready; while :; do sleep 0.05; done");
    await waitFor(() => job.outputBytesTotal > 0, "ready");
    assert.deepEqual(await job.send({ kind: "interrupt" }, soon()), { input: "interrupt", sentBytes: 0 });
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 7);
    assert.equal(text(job), "ready\ninterrupted\n");
  });

  it("reports a write to a child that closed its stdin, without crashing, and keeps the job", async () => {
    const job = start("exec 0<&-; echo closed; sleep 5");
    await waitFor(() => job.outputBytesTotal > 0, "the child to close stdin");
    const first = await job.send({ kind: "bytes", bytes: Buffer.from("anyone?\n") }, soon());
    assert.match(first.failure ?? "", /^stdin write failed: .*EPIPE/);
    assert.equal(first.sentBytes, 0, "nothing reached the job");
    const second = await job.send({ kind: "bytes", bytes: Buffer.from("again\n") }, soon());
    assert.match(second.failure ?? "", /^stdin write failed: /);
    assert.equal(statusOf(job), "running");
    killGroup(job);
    await untilExit(job);
  });
});

describe("Job log", () => {
  it("mirrors every byte to the log, complete when the exit is reported", async () => {
    const job = start("seq 1 300000; echo done >&2");
    await untilExit(job);
    const expected = `${Array.from({ length: 300_000 }, (_, i) => i + 1).join("\n")}\ndone\n`;
    assert.equal(job.outputBytesTotal, Buffer.byteLength(expected));
    assert.equal(readFileSync(job.logPath, "utf8"), expected);
    assert.equal(statSync(job.logPath).mode & 0o777, 0o600);
  });

  it("pauses the child while the disk is behind: pending log bytes stay bounded and none are lost", async () => {
    let maxPending = 0;
    let written = 0;
    const slowDisk = new LogDirectory({ ...logConfig({}), parent: logConfig().parent }, () => {
      const stream = new Writable({
        highWaterMark: LOG_PENDING_BYTES,
        write(chunk: Buffer, _encoding, callback) {
          maxPending = Math.max(maxPending, stream.writableLength);
          setTimeout(() => {
            written += chunk.length;
            callback();
          }, 4);
        },
      });
      return stream;
    });
    const job = jobs.start("head -c 8000000 /dev/zero", { logs: slowDisk });
    assert.equal(await untilExit(job, 60_000), "exited");
    assert.equal(written, 8_000_000, "every byte reached the log before the exit was reported");
    assert.equal(job.outputBytesTotal, 8_000_000);
    assert.ok(maxPending <= LOG_PENDING_BYTES + 256 * 1024, `at most ~1 MiB pending, saw ${maxPending}`);
  });
});

describe("long waits", () => {
  it("a 60 s window holds past 30 s and ends at its condition at 40 s, and at its end without one (a fake clock)", async (t) => {
    // Node's mock timers: setTimeout and Date move only with tick(); performance.now follows Date.
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    t.mock.method(performance, "now", () => Date.now());
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const quietJob = { exit: undefined, onExit: () => () => {} };
    const ended: string[] = [];
    const matchAt40s = new Promise<"matched">((resolve) => setTimeout(() => resolve("matched"), 40_000));
    void waitForExit(quietJob, performance.now() + 60_000, { condition: matchAt40s }).then((end) => ended.push(`conditional ${end}`));
    void waitForExit(quietJob, performance.now() + 60_000).then((end) => ended.push(`plain ${end}`));
    t.mock.timers.tick(30_001);
    await turn();
    assert.deepEqual(ended, [], "both still wait past 30 s");
    t.mock.timers.tick(10_000);
    await turn();
    assert.deepEqual(ended, ["conditional matched"]);
    t.mock.timers.tick(19_998);
    await turn();
    assert.deepEqual(ended, ["conditional matched"], "not before the window's end");
    t.mock.timers.tick(1);
    await turn();
    assert.deepEqual(ended, ["conditional matched", "plain deadline"]);
  });

  it("a wait longer than Node's timer range (2^31-1 ms) does not fire early", async () => {
    const job = start("sleep 300");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const thirtyDays = 30 * 24 * 3_600_000;
    assert.equal(
      await waitForExit(job, performance.now() + thirtyDays, { signal: controller.signal }),
      "aborted",
      "not an overflowed 1 ms timer",
    );
    killGroup(job);
    await untilExit(job);
  });
});
