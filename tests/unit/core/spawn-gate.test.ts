/**
 * The spawn gate: a lone spawn never waits, a batch gets one turn of the event loop each with I/O
 * handled between two turns, and speculative work (a warm shell) only runs in a turn nobody wanted.
 * Real event loop; the spawns are stood in for by synchronous markers.
 */
import assert from "node:assert/strict";
import { connect, createServer, type Socket } from "node:net";
import { describe, it } from "node:test";
import { spawnGate } from "../../../src/core/processes/spawn-gate.ts";
import { settled, spawnInTurn, turnMarker } from "../../helpers/spawn-turns.ts";

describe("spawn gate", () => {
  it("lets a lone spawn go at once, in the caller's turn", async () => {
    await settled();
    assert.equal(spawnGate().claim(), true);
    await settled();
  });

  it("gives each of sixteen parallel spawns a turn of its own, in order", async () => {
    await settled();
    const mark = turnMarker();
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 16 }, (_, who) =>
        spawnInTurn((n) => {
          mark(n);
          order.push(n);
        }, who),
      ),
    );
    assert.deepEqual(
      order,
      Array.from({ length: 16 }, (_, who) => who),
    );
  });

  it("reads pending socket data between two spawns of a batch", async () => {
    await settled();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const client = connect(port, "127.0.0.1");
    const peer = await accepted;
    let reads = 0;
    client.on("data", () => reads++);
    const readsAtSpawn: number[] = [];
    const spawns = Array.from({ length: 4 }, (_, who) =>
      spawnInTurn(() => {
        readsAtSpawn.push(reads);
        // Data the loop can read before the next spawn's turn.
        peer.write(`spawn ${who}\n`);
      }, who),
    );
    await Promise.all(spawns);
    client.destroy();
    peer.destroy();
    server.close();
    for (let i = 1; i < readsAtSpawn.length; i++) {
      assert.ok(readsAtSpawn[i]! > readsAtSpawn[i - 1]!, `I/O between spawns ${i - 1} and ${i}: ${readsAtSpawn.join(",")}`);
    }
  });

  it("runs speculative work only in a turn no spawn waits for", async () => {
    await settled();
    const gate = spawnGate();
    const events: string[] = [];
    assert.equal(gate.claim(), true);
    gate.whenIdle(() => {
      events.push("idle task");
      return true;
    });
    const waiter = gate.turn().then(() => events.push("spawn"));
    await waiter;
    await settled();
    assert.deepEqual(events, ["spawn", "idle task"]);
  });

  it("leaves the turn of an idle task that spawned nothing to a call's spawn; one that spawned keeps it", async () => {
    await settled();
    const gate = spawnGate();
    const claims: boolean[] = [];
    // Each claim is tried in the task's own turn, right after it ran.
    gate.whenIdle(() => {
      queueMicrotask(() => claims.push(gate.claim()));
      return false;
    });
    await settled();
    await settled();
    gate.whenIdle(() => {
      queueMicrotask(() => claims.push(gate.claim()));
      return true;
    });
    await settled();
    await settled();
    assert.deepEqual(claims, [true, false]);
  });

  it("survives an idle task that throws", async () => {
    await settled();
    const gate = spawnGate();
    gate.whenIdle(() => {
      throw new Error("boom");
    });
    let ran = false;
    gate.whenIdle(() => {
      ran = true;
      return true;
    });
    await settled();
    await settled();
    assert.equal(ran, true);
  });
});
