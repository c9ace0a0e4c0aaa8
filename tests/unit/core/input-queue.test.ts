/**
 * A job's bounded stdin: order, the 1 MiB bound, refusal with counts, EOF after queued bytes, failures,
 * and memory that stays flat however much is sent to a child that never reads.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { INPUT_QUEUE_BYTES, InputQueue, type InputSink } from "../../../src/core/job/job-stdin.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";

/** A sink that holds each write until the test releases it. */
function heldSink() {
  const writes: { bytes: Buffer; done: () => void; fail: (error: Error) => void }[] = [];
  let ended = false;
  const sink: InputSink = {
    write: (bytes) => new Promise((resolve, reject) => writes.push({ bytes, done: resolve, fail: reject })),
    closeInput: () => {
      ended = true;
    },
  };
  return { sink, writes, ended: () => ended };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("InputQueue", () => {
  it("writes in order, one piece at a time, and counts what the OS has", async () => {
    const { sink, writes } = heldSink();
    const queue = new InputQueue(sink, 100);
    assert.equal(queue.offer(Buffer.from("abc")), 3);
    assert.equal(queue.offer(Buffer.from("de")), 2);
    assert.equal(writes.length, 1, "the second piece waits for the first");
    assert.equal(queue.pendingBytes, 5);
    writes[0]!.done();
    await settle();
    assert.equal(writes.length, 2);
    assert.equal(writes.map((write) => write.bytes.toString()).join(""), "abcde");
    writes[1]!.done();
    await settle();
    assert.equal(queue.pendingBytes, 0);
    assert.equal(queue.flushed, 5);
  });

  it("takes only what fits under its bound and refuses the rest", () => {
    const { sink } = heldSink();
    const queue = new InputQueue(sink, 10);
    assert.equal(queue.offer(Buffer.alloc(25)), 10);
    assert.equal(queue.offer(Buffer.alloc(5)), 0);
    assert.equal(queue.pendingBytes, 10);
  });

  it("ends the input only after every byte queued before the end", async () => {
    const { sink, writes, ended } = heldSink();
    const queue = new InputQueue(sink, 100);
    queue.offer(Buffer.from("last line\n"));
    queue.end();
    assert.equal(ended(), false);
    writes[0]!.done();
    await settle();
    assert.equal(ended(), true);
    assert.equal(queue.offer(Buffer.from("after the end")), 0);
  });

  it("a failed write drops what waits and says why", async () => {
    const { sink, writes } = heldSink();
    const queue = new InputQueue(sink, 100);
    queue.offer(Buffer.from("abc"));
    queue.offer(Buffer.from("def"));
    writes[0]!.fail(new Error("write EPIPE"));
    await settle();
    assert.equal(queue.failed, "stdin write failed: write EPIPE");
    assert.equal(queue.pendingBytes, 0);
    assert.equal(queue.offer(Buffer.from("more")), 0);
  });
});

describe("a job's stdin", () => {
  it("keeps at most 1 MiB for a child that never reads, refuses the rest with counts, and keeps none of the caller's input", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const runtime = new ExecRuntime();
    const started = await runtime.exec(prepareExec({ cmd: "echo ready; sleep 60", yield_time_ms: 300 }, process.cwd(), process.env));
    const id = started.job.jobId;
    // Each input is watched through a weak reference: once the calls returned, nothing of the runtime
    // may hold it (four 50 MiB inputs held until the child reads would be 200 MiB).
    const inputs: WeakRef<Buffer>[] = [];
    const write = async () => {
      const bytes = Buffer.alloc(50 * 1024 * 1024, 0x61);
      inputs.push(new WeakRef(bytes));
      const t0 = performance.now();
      const report = await runtime.interact({ jobId: id, input: { kind: "bytes", bytes }, window: { ms: 300 } });
      return { ms: performance.now() - t0, ...report.input! };
    };
    for (let call = 0; call < 4; call++) {
      const input = await write();
      assert.ok(input.ms < 5_000, "the call returned within its window");
      assert.ok(input.pendingBytes! <= INPUT_QUEUE_BYTES, `pending ${input.pendingBytes}`);
      // Only the bound and what the OS pipe buffer took (64 KiB or so) were accepted on the first call.
      const osBuffer = 256 * 1024;
      assert.ok(input.refusedBytes! >= 50 * 1024 * 1024 - INPUT_QUEUE_BYTES - osBuffer, `refused ${input.refusedBytes}`);
      assert.match(input.failure!, /stdin is full: the job has not read \d+ bytes yet, so \d+ bytes of this input were refused/);
    }
    // A few turns of the loop and collections: V8 may keep a finished call's frame briefly.
    for (let round = 0; round < 20 && inputs.some((input) => input.deref() !== undefined); round++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      gc();
    }
    assert.deepEqual(
      inputs.map((input) => input.deref() === undefined),
      [true, true, true, true],
      "every input was released",
    );
    await runtime.shutdown();
  });

  it("a child that reads later gets every queued byte, in order", async () => {
    const runtime = new ExecRuntime();
    const started = await runtime.exec(prepareExec({ cmd: "sleep 1; wc -c", yield_time_ms: 250 }, process.cwd(), process.env));
    const id = started.job.jobId;
    const first = await runtime.interact({
      jobId: id,
      input: { kind: "bytes", bytes: Buffer.alloc(600 * 1024, 0x62) },
      window: { ms: 250 },
    });
    assert.equal(first.input!.refusedBytes, undefined);
    await runtime.interact({ jobId: id, input: { kind: "eof" }, window: { ms: 250 } });
    const last = await runtime.interact({ jobId: id, window: { ms: 10_000 } });
    assert.equal(last.output.text.trim(), String(600 * 1024));
    await runtime.shutdown();
  });
});
