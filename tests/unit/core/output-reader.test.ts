/**
 * Reading a child's output into one reused buffer: every byte arrives in order (a 32 MB flood with a
 * checksum), each chunk is a view of the shared buffer, pause holds the pipe, close is reported once
 * after the end of file, a destroyed reader closes too, a stream that is not a socket falls back
 * to 'data' events, and a flood hands over at most READ_TURN_BYTES per turn of the event loop, and
 * no read after the turn's time (READ_TURN_MS, on a stepped clock) is spent, a pause of the job's own
 * kept across those turns. Real child processes; the floods again beside CPU burners in
 * `tests/stress/transport.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import {
  READ_BUFFER_BYTES,
  READ_TURN_BYTES,
  READ_TURN_MS,
  ReadBatch,
  ReadTurn,
  readOutput,
} from "../../../src/core/transport/output-reader.ts";
import { quietFor, waitFor } from "../../helpers/processes.ts";
import { floodTurns, perTurn } from "../../helpers/transports.ts";

/** A child writing `script`'s output; its stdout read through `readOutput`. */
function readChild(script: string) {
  const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "ignore"] });
  const hash = createHash("sha256");
  const state = { bytes: 0, chunks: 0, largest: 0, closes: 0 };
  const storage = new Set<ArrayBufferLike>();
  const batch = new ReadBatch((chunk) => {
    state.bytes += chunk.length;
    state.chunks++;
    state.largest = Math.max(state.largest, chunk.length);
    storage.add(chunk.buffer);
    hash.update(chunk);
  });
  const reader = readOutput(child.stdout, batch, () => state.closes++);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { child, reader, state, storage, hash, exited };
}

describe("readOutput", () => {
  it("reads into one buffer of its own, when this Node allows it", async () => {
    const run = readChild("printf hello; sleep 0.05; printf again");
    await waitFor(() => run.state.closes === 1, "the close");
    assert.equal(run.reader.reusesBuffer, true, "Node's socket internals are as expected");
    assert.equal(run.state.bytes, 10);
    assert.equal(run.storage.size, 1, "every chunk is a view of the same storage");
  });

  it("reads a 32 MB flood completely, no chunk larger than the buffer", async () => {
    const run = readChild("head -c 32000000 /dev/zero | tr '\\0' 'a'");
    await waitFor(() => run.state.closes === 1, "the flood's end", 60_000);
    assert.equal(run.state.bytes, 32_000_000);
    assert.ok(run.state.largest <= READ_BUFFER_BYTES, `largest chunk ${run.state.largest}`);
    const expected = createHash("sha256").update(Buffer.alloc(32_000_000, 0x61)).digest("hex");
    assert.equal(run.hash.digest("hex"), expected);
  });

  it("holds the pipe while paused and delivers the rest after resume", async () => {
    const run = readChild("printf first; sleep 0.3; printf second");
    run.reader.pause();
    await run.exited;
    await quietFor(100);
    assert.equal(run.state.bytes, 0, "nothing read while paused");
    assert.equal(run.state.closes, 0, "no close while unread bytes wait");
    run.reader.resume();
    await waitFor(() => run.state.closes === 1, "the close");
    assert.equal(run.state.bytes, "firstsecond".length);
  });

  it("hands over at most READ_TURN_BYTES per turn of the event loop, every byte in the end (both paths)", async () => {
    await floodTurns();
  });

  it("yields to the next turn once the turn's deliveries took READ_TURN_MS, every byte in the end (both paths)", async () => {
    const perRead = 6; // ms each delivery takes on the stepped clock: the second read of a turn spends it
    const readsPerTurn = Math.ceil(READ_TURN_MS / perRead);
    for (const path of ["reused buffer", "data events"] as const) {
      const child = spawn("bash", ["-c", "head -c 8000000 /dev/zero"], { stdio: ["ignore", "pipe", "ignore"] });
      const source = path === "data events" ? child.stdout.pipe(new PassThrough({ highWaterMark: 4 * READ_BUFFER_BYTES })) : child.stdout;
      const { slots: reads, stop: stopCounting } = perTurn();
      let clock = 0;
      let calls = 0;
      // Every call moves the clock: a read's start and its end are `perRead` apart.
      const turn = new ReadTurn(() => {
        if (calls++ % 2 === 0) reads[reads.length - 1]!++;
        clock += perRead;
        return clock;
      });
      let closed = false;
      let bytes = 0;
      readOutput(
        source,
        new ReadBatch((chunk) => {
          bytes += chunk.length;
        }),
        () => {
          closed = true;
        },
        turn,
      );
      await waitFor(() => closed, "the flood's end", 60_000);
      stopCounting();
      assert.equal(bytes, 8_000_000, path);
      const most = Math.max(...reads);
      assert.ok(most <= readsPerTurn, `${path}: ${most} reads in one turn`);
      assert.ok(reads.filter((n) => n === readsPerTurn).length > 1, `${path}: the time bound was reached`);
    }
  });

  it("keeps a pause of the job's own across the pause at the end of a turn (a 2 MB backlog)", async () => {
    // A backlog larger than a turn's share, already waiting: the first turn hands over its share and
    // yields. The job holds the pipe in that very turn; the end of the turn must not resume it.
    const stream = new PassThrough({ highWaterMark: 4 * 1024 * 1024 });
    for (let i = 0; i < 32; i++) stream.write(Buffer.alloc(READ_BUFFER_BYTES, 0x61));
    stream.end();
    const state = { bytes: 0, closes: 0, heldAt: -1 };
    const reader = readOutput(
      stream,
      new ReadBatch((chunk) => {
        state.bytes += chunk.length;
        if (state.heldAt === -1 && state.bytes >= READ_TURN_BYTES) {
          reader.pause();
          state.heldAt = state.bytes;
        }
      }),
      () => state.closes++,
    );
    await waitFor(() => state.heldAt !== -1, "a turn's share of the backlog");
    await quietFor(200);
    assert.equal(state.bytes, state.heldAt, "nothing handed over while the job holds the pipe, turns later");
    reader.resume();
    await waitFor(() => state.closes === 1, "the close");
    assert.equal(state.bytes, 32 * READ_BUFFER_BYTES);
  });

  it("reports close once when destroyed while the child still writes", async () => {
    const run = readChild("while :; do echo x; sleep 0.01; done");
    await waitFor(() => run.state.bytes > 0, "some output");
    run.reader.destroy();
    await waitFor(() => run.state.closes === 1, "the close");
    run.child.kill("SIGKILL");
    await run.exited;
    await quietFor(50);
    assert.equal(run.state.closes, 1);
  });

  it("falls back to 'data' events for a stream that is not a socket", async () => {
    const stream = new PassThrough();
    const got: string[] = [];
    let closes = 0;
    const reader = readOutput(stream, new ReadBatch((chunk) => got.push(chunk.toString())), () => closes++);
    assert.equal(reader.reusesBuffer, false);
    stream.end("via data events");
    await waitFor(() => closes === 1, "the close");
    assert.deepEqual(got, ["via data events"]);
  });
});
