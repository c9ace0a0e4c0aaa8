/**
 * Waits that end when the work does, through the real Pi CLI: on the newest host, `until_pattern`'s
 * Pi path (a server's ready line after 1.5 s, matched within a 60 s window, the rest read by the next
 * call); on every host, a steer Pi delivers during a 60 s poll ending it at once. The rules (an
 * unfinished prompt, a line split across writes, the PTY echo, linear-time and refused patterns,
 * quiet, input_wait) are `tests/unit/core/runtime.until.test.ts`'s, a window past 30 s on a fake
 * clock is `tests/unit/core/job.test.ts`'s, and the clamps are `wait-policy.test.ts`'s.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, firstSession, say, steps } from "../helpers/scripted-model.ts";

const READY_SERVER = "echo starting; sleep 1.5; echo 'ready on :3000'; echo 'GET /health'; sleep 60";

/** One Pi per host for the enclosing `describe`. */
function piOn(host: (typeof PI_HOSTS)[number]): () => PiRpcHost {
  let pi: PiRpcHost | undefined;
  before(async () => {
    pi = await PiRpcHost.start(host);
  });
  after(async () => {
    await pi?.close();
  });
  return () => pi!;
}

for (const host of NEWEST_HOST_ONLY) {
  describe(`until_pattern on ${host.name}`, () => {
    const piOf = piOn(host);

    it("a server that prints ready after 1.5 s returns then, matched; the next call reads exactly the rest", async () => {
      const run = await piOf().run(
        "start the server",
        steps(
          call("exec_command", { cmd: READY_SERVER, yield_time_ms: 60_000, until_pattern: "(?i)ready on" }),
          (view) => call("write_stdin", { session_id: firstSession(view), yield_time_ms: 5_000, until_pattern: "GET" }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const [started, next] = inCallOrder(run);
      const header = headerOf(started!.text);
      assert.equal(header.wait_status, "matched", started!.text);
      assert.equal(header.matched_line, "ready on :3000");
      assert.equal(outputOf(started!.text), "starting\nready on :3000\n");
      assert.ok(started!.durationMs! >= 1_400 && started!.durationMs! < 15_000, `took ${started!.durationMs} ms`);
      assert.equal(outputOf(next!.text), "GET /health\n");
      assert.doesNotMatch(started!.text, /60000 →/, "a conditional wait keeps its 60 s window");
    });
  });
}

for (const host of PI_HOSTS) {
  describe(`a steer during a wait on ${host.name}`, () => {
    const piOf = piOn(host);

    it("a steer sent over RPC during a 60 s poll ends it in under a second; the job keeps running", async () => {
      const pi = piOf();
      const from = pi.records.length;
      const running = pi.run("poll a long job", (view) => {
        if (view.prompt === "stop waiting, please") return say("stopped waiting");
        return steps(call("exec_command", { cmd: "echo up; sleep 120", yield_time_ms: 300 }), (inner) =>
          call("write_stdin", { session_id: firstSession(inner), yield_time_ms: 60_000 }),
        )(view);
      });
      await pi.waitForRecord(
        (record) => record.type === "tool_execution_start" && record.toolName === "write_stdin",
        from,
        30_000,
        "the poll",
      );
      const t0 = performance.now();
      await pi.request({ type: "steer", message: "stop waiting, please" });
      const done = await pi.waitForRecord(
        (record) => record.type === "tool_execution_end" && record.toolName === "write_stdin",
        from,
        30_000,
        "the poll's end",
      );
      assert.ok(performance.now() - t0 < 1_000, `the poll ended ${Math.round(performance.now() - t0)} ms after the steer`);
      const run = await running;
      const poll = run.tools.find((tool) => tool.name === "write_stdin")!;
      assert.equal(headerOf(poll.text).wait_status, "steered", poll.text);
      assert.ok(headerOf(poll.text).session_id, "the job keeps running");
      assert.equal(done.isError, false);
      await pi.run("stop it", steps(call("kill_session", { session_id: Number(headerOf(poll.text).session_id) })));
    });
  });
}
