/**
 * Joining a job's pipe reads: driven here the way a socket drives a slot (it reads into the place
 * `next` handed out, then reports the count), so each rule is checked exactly: a read after a quiet
 * spell is delivered in the same call, reads in quick succession are held and delivered together
 * within OUTPUT_BATCH_MS, the other pipe's read delivers what is held first, a nearly full buffer is
 * delivered at once, a flush keeps the socket's read place, and chunks from Node's own buffers go
 * after what is held. Real pipes are read through a batch in output-reader.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type BatchSlot,
  OUTPUT_BATCH_MS,
  READ_BUFFER_BYTES,
  READ_MIN_ROOM_BYTES,
  ReadBatch,
} from "../../../src/core/transport/output-reader.ts";
import { waitFor } from "../../helpers/processes.ts";

/** What a socket does: write `text` where the slot said, report the count, ask for the next place. */
function socketRead(slot: BatchSlot, place: Buffer, text: string): Buffer {
  place.write(text, "latin1");
  slot.read(text.length);
  return slot.next();
}

/** A batch on a clock that stands still unless a test moves it (`clock.ms`). */
function delivered() {
  const chunks: string[] = [];
  const clock = { ms: 1_000 };
  const batch = new ReadBatch(
    (chunk) => chunks.push(chunk.toString("latin1")),
    () => clock.ms,
  );
  return { batch, chunks, clock };
}

describe("ReadBatch", () => {
  it("delivers a read after a quiet spell in the same call", () => {
    const { batch, chunks } = delivered();
    const slot = batch.slot();
    socketRead(slot, slot.next(), "Password: ");
    assert.deepEqual(chunks, ["Password: "]);
  });

  it("holds reads in quick succession and delivers them together within OUTPUT_BATCH_MS", async () => {
    const { batch, chunks } = delivered();
    const slot = batch.slot();
    let place = socketRead(slot, slot.next(), "one\n");
    place = socketRead(slot, place, "two\n");
    place = socketRead(slot, place, "three\n");
    assert.deepEqual(chunks, ["one\n"], "the first read went at once, the next two are held");
    const held = performance.now();
    await waitFor(() => chunks.length === 2, "the held reads", 5_000);
    assert.ok(performance.now() - held < OUTPUT_BATCH_MS + 1_000, "delivered by the batch's timer, not later");
    assert.deepEqual(chunks, ["one\n", "two\nthree\n"]);
  });

  it("delivers what one pipe holds before the other pipe's read: order across pipes", () => {
    const { batch, chunks } = delivered();
    const out = batch.slot();
    const err = batch.slot();
    let outPlace = socketRead(out, out.next(), "o1 ");
    outPlace = socketRead(out, outPlace, "o2 ");
    let errPlace = socketRead(err, err.next(), "e1 ");
    errPlace = socketRead(err, errPlace, "e2 ");
    socketRead(out, outPlace, "o3 ");
    batch.flush();
    assert.equal(chunks.join(""), "o1 o2 e1 e2 o3 ");
    assert.deepEqual(chunks, ["o1 ", "o2 ", "e1 e2 ", "o3 "]);
  });

  it("delivers at once when less than READ_MIN_ROOM_BYTES is left, and the next read starts at the buffer's start", () => {
    const { batch, chunks } = delivered();
    const slot = batch.slot();
    let place = socketRead(slot, slot.next(), "q");
    const block = "x".repeat(8 * 1024);
    let held = 0;
    while (place.length - block.length >= READ_MIN_ROOM_BYTES) {
      place = socketRead(slot, place, block);
      held += block.length;
    }
    assert.equal(chunks.length, 1, "still held");
    place = socketRead(slot, place, block);
    assert.equal(chunks.length, 2, "delivered when the room ran low");
    assert.equal(chunks[1]!.length, held + block.length);
    assert.equal(place.length, READ_BUFFER_BYTES, "the next read may use the whole buffer");
  });

  it("keeps the socket's read place across a flush by the timer", async () => {
    const { batch, chunks } = delivered();
    const slot = batch.slot();
    let place = socketRead(slot, slot.next(), "a");
    place = socketRead(slot, place, "bb");
    await waitFor(() => chunks.length === 2, "the held read");
    // The socket still reads where it was told before the flush: those bytes must be what is delivered.
    place = socketRead(slot, place, "ccc");
    batch.flush();
    assert.deepEqual(chunks, ["a", "bb", "ccc"]);
  });

  it("delivers a read at once again after a quiet spell of OUTPUT_BATCH_MS", () => {
    const { batch, chunks, clock } = delivered();
    const slot = batch.slot();
    let place = socketRead(slot, slot.next(), "first ");
    place = socketRead(slot, place, "held ");
    batch.flush();
    clock.ms += OUTPUT_BATCH_MS;
    socketRead(slot, place, "after a pause");
    assert.deepEqual(chunks, ["first ", "held ", "after a pause"]);
  });

  it("delivers a chunk of Node's own after what is held", () => {
    const { batch, chunks } = delivered();
    const slot = batch.slot();
    let place = socketRead(slot, slot.next(), "1 ");
    place = socketRead(slot, place, "2 ");
    batch.deliverNow(Buffer.from("3 "));
    assert.deepEqual(chunks, ["1 ", "2 ", "3 "]);
  });
});
