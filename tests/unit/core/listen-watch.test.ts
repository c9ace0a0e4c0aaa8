/**
 * `until_listening`'s watch with a stepped clock and a scripted reader: the baseline taken when the
 * call begins, a new address or the given port ending the wait once two checks in a row see it (a
 * port probe seen once does not), the check interval (never more often than every 100 ms, never after
 * the end), and every value refused before anything runs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { checkUntilListening, LISTEN_CHECK_MS, type ListenTarget, ListenWatch } from "../../../src/core/wait/listen-watch.ts";
import { SteppedClock } from "../../helpers/clock.ts";

/** A watch over a reader that returns `sockets` as the test sets it, counting its reads. */
function watching(target: ListenTarget, initial: string[] = []) {
  const clock = new SteppedClock();
  const state = { sockets: initial, reads: 0, met: [] as string[] };
  const watch = new ListenWatch(
    target,
    () => {
      state.reads++;
      return state.sockets;
    },
    (address) => state.met.push(address),
    clock,
  );
  watch.start();
  return { clock, state, watch };
}

describe("until_listening's watch", () => {
  it("true ends on an address the job did not listen on when the call began, not on one it held", () => {
    const { clock, state, watch } = watching({ kind: "new" }, ["127.0.0.1:8000"]);
    clock.advance(1_000);
    assert.deepEqual(state.met, [], "the address held at the start does not end the wait");
    state.sockets = ["127.0.0.1:8000", "[::]:5173"];
    clock.advance(LISTEN_CHECK_MS);
    assert.deepEqual(state.met, [], "seen once");
    clock.advance(LISTEN_CHECK_MS);
    assert.deepEqual(state.met, ["[::]:5173"]);
    assert.equal(watch.address, "[::]:5173");
    assert.deepEqual(watch.listening, ["127.0.0.1:8000", "[::]:5173"], "what the check that ended it read");
    const reads = state.reads;
    clock.advance(5_000);
    assert.equal(state.reads, reads, "no check after the end");
    assert.deepEqual(state.met, ["[::]:5173"], "met once");
  });

  it("a port ends the wait when that port is listened on, not another; one already listened on ends it at the first check", () => {
    const { clock, state } = watching({ kind: "port", port: 8080 });
    state.sockets = ["127.0.0.1:9090"];
    clock.advance(500);
    assert.deepEqual(state.met, [], "another port");
    state.sockets = ["127.0.0.1:9090", "0.0.0.0:8080"];
    clock.advance(2 * LISTEN_CHECK_MS);
    assert.deepEqual(state.met, ["0.0.0.0:8080"]);
    const already = watching({ kind: "port", port: 8080 }, ["[::1]:8080"]);
    already.clock.advance(LISTEN_CHECK_MS);
    assert.deepEqual(already.state.met, ["[::1]:8080"], "met by the first check after the baseline");
    assert.equal(already.state.reads, 2);
  });

  it("a port probe (listened on at one check, closed at the next) does not end the wait; the real bind after it does", () => {
    for (const target of [{ kind: "new" }, { kind: "port", port: 5173 }] as ListenTarget[]) {
      const { clock, state, watch } = watching(target);
      state.sockets = ["127.0.0.1:5173"];
      clock.advance(LISTEN_CHECK_MS);
      state.sockets = [];
      clock.advance(LISTEN_CHECK_MS);
      clock.advance(5 * LISTEN_CHECK_MS);
      assert.deepEqual(state.met, [], `${target.kind}: the probe`);
      // A second probe of another address, then the real bind.
      state.sockets = ["[::1]:5173"];
      clock.advance(LISTEN_CHECK_MS);
      state.sockets = ["127.0.0.1:5173"];
      clock.advance(LISTEN_CHECK_MS);
      assert.deepEqual(state.met, [], `${target.kind}: another address at the next check is not the same one`);
      // A probe beside the real listen: the address still there at the next check ends it.
      state.sockets = ["[::1]:5173", "127.0.0.1:5173"];
      clock.advance(LISTEN_CHECK_MS);
      assert.deepEqual(state.met, ["127.0.0.1:5173"], target.kind);
      assert.deepEqual(watch.listening, ["[::1]:5173", "127.0.0.1:5173"]);
    }
  });

  it("reads the sockets at most once per 100 ms, and not at all once stopped", () => {
    const { clock, state, watch } = watching({ kind: "new" });
    assert.equal(state.reads, 1, "the baseline");
    clock.advance(1_000);
    assert.equal(state.reads, 1 + 1_000 / LISTEN_CHECK_MS);
    watch.stop();
    clock.advance(1_000);
    assert.equal(state.reads, 1 + 1_000 / LISTEN_CHECK_MS);
  });

  it("a reader that cannot tell (undefined) never ends the wait", () => {
    const clock = new SteppedClock();
    const met: string[] = [];
    new ListenWatch(
      { kind: "new" },
      () => undefined,
      (address) => met.push(address),
      clock,
    ).start();
    clock.advance(2_000);
    assert.deepEqual(met, []);
  });
});

describe("until_listening's values", () => {
  it("true is a new address, a whole number 1–65535 a port, absent or false no condition", () => {
    assert.deepEqual(checkUntilListening(true, ""), { kind: "new" });
    assert.deepEqual(checkUntilListening(1, ""), { kind: "port", port: 1 });
    assert.deepEqual(checkUntilListening(65_535, ""), { kind: "port", port: 65_535 });
    assert.equal(checkUntilListening(undefined, ""), undefined);
    assert.equal(checkUntilListening(false, ""), undefined);
  });

  it("0, 70000, 1.5, -1, a string, null and an object are refused with what is allowed and what did not happen", () => {
    for (const value of [0, 70_000, 1.5, -1, "abc", "8080", null, {}, Number.NaN]) {
      assert.throws(
        () => checkUntilListening(value, "Nothing was started."),
        (error: Error) =>
          error instanceof ExecRequestError &&
          /until_listening must be true .* or a TCP port from 1 to 65535, got .*\. Nothing was started\.$/.test(error.message),
        String(value),
      );
    }
  });
});
