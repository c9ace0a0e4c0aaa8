/**
 * The staged log writer: it copies (the caller reuses its buffer), writes a quiet job's bytes at
 * once, a flood in large pieces, says "pause" at the pending limit and "resume" at half of it,
 * answers `flushed` when the disk has everything, and lets go of everyone when the stream fails.
 * A slow disk is mocked with a Writable whose writes complete when the test says so (it cannot be
 * made slow on demand); one test writes a real file.
 */
import assert from "node:assert/strict";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { LOG_PENDING_BYTES, LOG_STAGE_BYTES, StagedWriter } from "../../../src/core/log/job-log.ts";

/** A disk (mocked) whose writes finish only when `complete()` is called. */
function slowDisk() {
  const written: Buffer[] = [];
  const pending: (() => void)[] = [];
  const stream = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      written.push(Buffer.from(chunk));
      pending.push(() => done());
    },
  });
  return {
    stream,
    written,
    /** Completes the writes issued so far, and lets their callbacks run. */
    async complete() {
      while (pending.length > 0) {
        for (const done of pending.splice(0)) done();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    get inFlight() {
      return pending.length;
    },
  };
}

describe("StagedWriter", () => {
  it("copies what it is given: the caller may overwrite its buffer at once", async () => {
    const disk = slowDisk();
    const writer = new StagedWriter(disk.stream, () => {});
    const reused = Buffer.from("first line\n");
    writer.write(reused);
    reused.fill(0x78);
    writer.write(Buffer.from("second\n"));
    await disk.complete();
    assert.equal(Buffer.concat(disk.written).toString(), "first line\nsecond\n");
  });

  it("sends a quiet job's bytes to the disk at once, and batches what arrives meanwhile", async () => {
    const disk = slowDisk();
    const writer = new StagedWriter(disk.stream, () => {});
    writer.write(Buffer.from("a"));
    assert.equal(disk.written.length, 1, "the first bytes did not wait for more");
    for (const piece of ["b", "c", "d"]) writer.write(Buffer.from(piece));
    assert.equal(disk.written.length, 1, "bytes written while a write is in flight are staged");
    await disk.complete();
    assert.deepEqual(disk.written.map(String), ["a", "bcd"]);
  });

  it("writes a flood in staging-buffer pieces, says pause at the limit and resume at half", async () => {
    const disk = slowDisk();
    let drains = 0;
    const writer = new StagedWriter(disk.stream, () => drains++);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let accepted = 0;
    while (writer.write(chunk)) accepted += chunk.length;
    accepted += chunk.length;
    assert.ok(accepted >= LOG_PENDING_BYTES, `paused after ${accepted} bytes`);
    assert.ok(accepted < LOG_PENDING_BYTES + chunk.length * 2);
    for (const piece of disk.written.slice(1)) assert.ok(piece.length <= LOG_STAGE_BYTES);
    assert.equal(drains, 0);
    await disk.complete();
    assert.equal(drains, 1, "one resume once the disk caught up");
    assert.equal(writer.pending, 0);
    assert.equal(Buffer.concat(disk.written).length, accepted);
  });

  it("resolves flushed only when every byte reached the disk", async () => {
    const disk = slowDisk();
    const writer = new StagedWriter(disk.stream, () => {});
    writer.write(Buffer.alloc(10));
    writer.write(Buffer.alloc(10));
    let flushed = false;
    const done = writer.flushed().then(() => {
      flushed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(flushed, false);
    await disk.complete();
    await done;
    assert.equal(flushed, true);
    await writer.flushed(); // nothing pending: at once
  });

  it("lets go of flush waiters and a paused source when the stream fails", async () => {
    const disk = slowDisk();
    let drains = 0;
    const writer = new StagedWriter(disk.stream, () => drains++);
    while (writer.write(Buffer.alloc(64 * 1024))) {}
    const waiting = writer.flushed();
    writer.streamFailed();
    await waiting;
    assert.equal(drains, 1, "the paused job resumes (its log is marked partial elsewhere)");
    assert.equal(writer.write(Buffer.alloc(10)), true, "later writes are dropped, never paused");
  });

  it("writes a real file completely, in order, from a reused source buffer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-stage-"));
    try {
      const path = join(dir, "log");
      const stream = createWriteStream(path);
      const writer = new StagedWriter(stream, () => {});
      const source = Buffer.alloc(10_000);
      const expected: Buffer[] = [];
      for (let i = 0; i < 500; i++) {
        source.fill(i % 251);
        const length = 1 + ((i * 7919) % source.length);
        expected.push(Buffer.from(source.subarray(0, length)));
        if (!writer.write(source.subarray(0, length))) await writer.flushed();
      }
      await writer.flushed();
      const closed = new Promise<void>((resolve) => stream.on("close", () => resolve()));
      writer.end();
      await closed;
      assert.ok(readFileSync(path).equals(Buffer.concat(expected)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
