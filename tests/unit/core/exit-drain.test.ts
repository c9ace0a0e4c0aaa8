/** When an exit may be reported while output still flows: a quiet window of reading time, and a cap. */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createConnection, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ExitDrain, POST_EXIT_DRAIN_CAP_MS } from "../../../src/core/job/job-ending.ts";
import { POST_EXIT_DRAIN_MS } from "../../../src/core/shared/constants.ts";
import { quietFor } from "../../helpers/processes.ts";
import { scratchDirectory } from "../../helpers/runtime.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function timed() {
  let doneAt: number | undefined;
  const drain = new ExitDrain(() => {
    doneAt = performance.now();
  });
  return { drain, doneAt: () => doneAt };
}

describe("ExitDrain", () => {
  it("ends after a quiet window once the leader exited", async () => {
    const { drain, doneAt } = timed();
    const start = performance.now();
    drain.start(false);
    await sleep(POST_EXIT_DRAIN_MS * 3);
    assert.ok(doneAt() !== undefined && doneAt()! - start >= POST_EXIT_DRAIN_MS - 5);
  });

  it("every chunk restarts the window, so output still being read is never cut off", async () => {
    const { drain, doneAt } = timed();
    drain.start(false);
    for (let i = 0; i < 6; i++) {
      await sleep(POST_EXIT_DRAIN_MS / 3);
      drain.data();
    }
    assert.equal(doneAt(), undefined, "still reading");
    await sleep(POST_EXIT_DRAIN_MS * 3);
    assert.notEqual(doneAt(), undefined);
  });

  it("a descendant that never stops printing is cut off at the cap", async () => {
    const { drain, doneAt } = timed();
    const start = performance.now();
    drain.start(false);
    while (doneAt() === undefined && performance.now() - start < POST_EXIT_DRAIN_CAP_MS * 3) {
      drain.data();
      await sleep(10);
    }
    assert.ok(doneAt() !== undefined, "the cap ended it");
    assert.ok(doneAt()! - start >= POST_EXIT_DRAIN_CAP_MS - 20);
  });

  it("the clock stands still while reading is paused", async () => {
    const { drain, doneAt } = timed();
    drain.start(true);
    await quietFor(POST_EXIT_DRAIN_MS * 3);
    assert.equal(doneAt(), undefined, "paused: bytes behind a slow disk are not given up");
    drain.resume();
    await sleep(POST_EXIT_DRAIN_MS * 3);
    assert.notEqual(doneAt(), undefined);
  });

  it("a window that runs out while the process is not run waits for the next poll: the last line written meanwhile is read first", async () => {
    const path = join(scratchDirectory("drain"), "socket");
    const server = createServer();
    server.listen(path);
    await once(server, "listening");
    const accepted = once(server, "connection") as Promise<[Socket]>;
    const writer = createConnection(path);
    const [reader] = await accepted;
    try {
      const order: string[] = [];
      const drain = new ExitDrain(() => order.push("exit reported"));
      reader.on("data", () => {
        order.push("last line read");
        drain.data();
      });
      // After this turn's poll for I/O (immediates run after it): the leader exited, then the machine
      // does not run this process for longer than the window, and the leader's last line reaches the
      // kernel meanwhile (a local socket's write goes to the kernel at once). The loop's timers run next.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          const start = performance.now();
          drain.start(false);
          while (performance.now() < start + POST_EXIT_DRAIN_MS / 2) {}
          writer.write("the leader's last line\n");
          while (performance.now() < start + POST_EXIT_DRAIN_MS * 1.5) {}
          resolve();
        }),
      );
      await sleep(POST_EXIT_DRAIN_MS * 3);
      assert.deepEqual(order, ["last line read", "exit reported"]);
    } finally {
      writer.destroy();
      reader.destroy();
      server.close();
    }
  });

  it("a cancelled drain never fires", async () => {
    const { drain, doneAt } = timed();
    drain.start(false);
    drain.cancel();
    await quietFor(POST_EXIT_DRAIN_MS * 3);
    assert.equal(doneAt(), undefined);
  });
});
