import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeadTailBuffer, joinRetained, omissionMarker } from "../../../src/core/output/head-tail-buffer.ts";
import { HEAD_TAIL_BYTES } from "../../../src/core/shared/constants.ts";

const bytes = (text: string) => Buffer.from(text);
const contents = (buffer: HeadTailBuffer) => {
  const { head, tail, omittedBytes } = buffer.drain();
  return { text: Buffer.concat([head, tail]).toString(), omittedBytes };
};

// The cases of Codex's head_tail_buffer tests, on our implementation.
describe("HeadTailBuffer (Codex's cases)", () => {
  it("keeps the prefix and the suffix when over budget", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes("0123456789"));
    buffer.push(bytes("ab"));
    const { text, omittedBytes } = contents(buffer);
    assert.ok(text.startsWith("01234"), text);
    assert.ok(text.endsWith("89ab"), text);
    assert.ok(omittedBytes > 0);
  });

  it("drops everything with a zero budget, counting it", () => {
    const buffer = new HeadTailBuffer(0);
    buffer.push(bytes("abc"));
    assert.equal(buffer.retainedBytes, 0);
    assert.deepEqual(contents(buffer), { text: "", omittedBytes: 3 });
  });

  it("keeps only the last byte when the head budget is zero", () => {
    const buffer = new HeadTailBuffer(1);
    buffer.push(bytes("abc"));
    assert.deepEqual(contents(buffer), { text: "c", omittedBytes: 2 });
  });

  it("starts over after a drain", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes("0123456789abcdef"));
    buffer.drain();
    assert.equal(buffer.retainedBytes, 0);
    assert.equal(buffer.omittedBytes, 0);
    buffer.push(bytes("xy"));
    assert.deepEqual(contents(buffer), { text: "xy", omittedBytes: 0 });
  });

  it("keeps only the end of a chunk larger than the tail budget", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes("0123456789"));
    buffer.push(bytes("ABCDEFGHIJK"));
    const { text } = contents(buffer);
    assert.equal(text, "01234GHIJK");
  });

  it("fills the head, then the tail, across chunks", () => {
    const buffer = new HeadTailBuffer(10);
    for (const part of ["01", "234", "567", "89"]) buffer.push(bytes(part));
    assert.equal(buffer.retainedBytes, 10);
    assert.equal(buffer.omittedBytes, 0);
    buffer.push(bytes("a"));
    assert.deepEqual(contents(buffer), { text: "012346789a", omittedBytes: 1 });
  });

  it("keeps a 1 MiB prefix and later suffixes with the default budget", () => {
    const buffer = new HeadTailBuffer();
    buffer.push(Buffer.alloc(HEAD_TAIL_BYTES, "a"));
    buffer.push(bytes("b"));
    buffer.push(bytes("c"));
    assert.equal(buffer.retainedBytes, HEAD_TAIL_BYTES);
    const { head, tail, omittedBytes } = buffer.drain();
    assert.equal(head[0], "a".charCodeAt(0));
    assert.equal(head.length + tail.length, HEAD_TAIL_BYTES);
    assert.equal(tail.subarray(-2).toString(), "bc");
    assert.equal(omittedBytes, 2);
  });
});

describe("HeadTailBuffer (our additions)", () => {
  it("wraps the tail ring across many small writes and keeps byte order", () => {
    const buffer = new HeadTailBuffer(8);
    const stream = "abcdefghijklmnopqrstuvwxyz";
    for (const char of stream) buffer.push(bytes(char));
    assert.deepEqual(contents(buffer), { text: `abcd${stream.slice(-4)}`, omittedBytes: stream.length - 8 });
  });

  it("counts every byte: retained + omitted = pushed", () => {
    const buffer = new HeadTailBuffer(1000);
    let pushed = 0;
    for (let i = 0; i < 500; i++) {
      const chunk = Buffer.alloc((i * 37) % 101, i % 256);
      buffer.push(chunk);
      pushed += chunk.length;
    }
    assert.equal(buffer.retainedBytes + buffer.omittedBytes, pushed);
  });

  it("splices an explicit marker at the gap, and none without a gap", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes("0123456789"));
    buffer.push(bytes("abc"));
    assert.equal(joinRetained(buffer.drain()).toString(), `01234${omissionMarker(3)}89abc`);
    buffer.push(bytes("hello"));
    assert.equal(joinRetained(buffer.drain()).toString(), "hello");
  });

  it("does not allocate the full budget for small output", () => {
    const buffer = new HeadTailBuffer();
    buffer.push(bytes("hi"));
    const { head } = buffer.drain();
    assert.ok(head.buffer.byteLength < 64 * 1024, `head storage is ${head.buffer.byteLength} bytes`);
  });
});
