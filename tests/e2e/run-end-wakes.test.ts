/**
 * The one decision point for every wake, through the real Pi CLI (RPC mode) on every host: the model
 * keeps working in the same turn after a job's exit or line (a tool call waits for a file the job
 * makes, well past the batch window), then reads, polls or kills the job; exactly one of a result or
 * a prompt says it. A matching line a poll's cap cut is named by the poll's header; a line a wake
 * named never wakes again; a match during an exit's drain goes with the exit as one prompt. "No
 * prompt" is read once Pi has settled with no wake pending (`PiRpcHost.settle`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { headerOf, isWake, outputOf, type PiEvent, textOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { FAST_PATTERN_WAKES, type PiRpcHost, piForSuite } from "../helpers/pi-rpc.ts";
import { quietFor } from "../helpers/processes.ts";
import { call, firstSession, say, steps } from "../helpers/scripted-model.ts";

const wakeText = (record: PiEvent) => textOf(record.message.content);
const sessionIn = (text: string) => Number(/session (\d+)/.exec(text)?.[1]);

/**
 * A command for the model's next tool call in the same turn: it returns once `file` exists (the job
 * made it just before its exit or right after its line), and one second later — four batch windows,
 * so a wake handed to Pi as soon as it was due would be in Pi's follow-up queue by then.
 */
const afterFile = (file: string) => `while [ ! -e ${file} ]; do sleep 0.05; done; sleep 1`;

for (const host of PI_HOSTS) {
  describe(`one decision point for every wake on ${host.name}`, () => {
    let pi: PiRpcHost;
    piForSuite(host, FAST_PATTERN_WAKES, (started) => {
      pi = started;
    });
    const wakesSince = (from: number) => pi.records.slice(from).filter(isWake);
    const marker = (name: string) => join(pi.dirs.root, `${name}-${Date.now()}`);

    it("an exit the model polls later in the same turn is told by the poll only, never also by a wake (finding 1)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const exited = marker("exited");
      const run = await pi.run(
        "start, keep working, then poll",
        steps(
          call("exec_command", { cmd: `sleep 0.5; echo done; touch ${exited}; exit 3`, on_exit: "wake", yield_time_ms: 250 }),
          call("exec_command", { cmd: afterFile(exited), yield_time_ms: 30_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view) }),
          say("polled"),
        ),
      );
      assert.equal(headerOf(run.tools[0]!.text).completion_notification, "armed");
      const poll = headerOf(run.tools[2]!.text);
      assert.equal(poll.exit_code, "3");
      assert.equal(poll.on_exit_wake, "consumed");
      await pi.settle();
      assert.deepEqual(wakesSince(from), [], "the result told it: no prompt");
    });

    it("a line the model reads with until_pattern and a job it then kills in the same turn never wake (finding 2)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const printed = marker("printed");
      const run = await pi.run(
        "start, keep working, read, kill",
        steps(
          call("exec_command", {
            cmd: `sleep 0.5; echo 'ERROR disk full'; touch ${printed}; sleep 300`,
            wake_on_pattern: "ERROR",
            yield_time_ms: 250,
          }),
          call("exec_command", { cmd: afterFile(printed), yield_time_ms: 30_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), until_pattern: "ERROR", yield_time_ms: 5_000 }),
          (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
          say("read and stopped"),
        ),
      );
      assert.equal(headerOf(run.tools[2]!.text).wait_status, "matched");
      assert.match(outputOf(run.tools[2]!.text), /ERROR disk full/);
      await pi.settle();
      assert.deepEqual(wakesSince(from), [], "the read showed the line: no prompt");
    });

    it("a matching line the cap cut from a poll is named by the poll's header and never wakes (finding 5)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const printed = marker("flood");
      const run = await pi.run(
        "start, keep working, poll, stop",
        steps(
          call("exec_command", {
            cmd: `sleep 0.5; echo 'ERROR disk full'; seq 1 3000; touch ${printed}; sleep 300`,
            wake_on_pattern: "ERROR",
            yield_time_ms: 250,
          }),
          call("exec_command", { cmd: afterFile(printed), yield_time_ms: 30_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view) }),
          (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
          say("polled"),
        ),
      );
      const poll = run.tools[2]!.text;
      assert.doesNotMatch(outputOf(poll), /ERROR disk full/, "cut by the 2 000-line cap");
      assert.equal(headerOf(poll).pattern_matched_unshown, "1 line, first: ERROR disk full");
      await pi.settle();
      assert.deepEqual(wakesSince(from), [], "named by the poll: no prompt");
    });

    it("an exit left unread in the turn wakes exactly once, after the run", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const exited = marker("unread");
      const run = await pi.run(
        "start, keep working, never read it",
        steps(
          call("exec_command", { cmd: `sleep 0.5; touch ${exited}; exit 4`, on_exit: "wake", yield_time_ms: 250 }),
          call("exec_command", { cmd: afterFile(exited), yield_time_ms: 30_000 }),
          say("moving on"),
        ),
      );
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      const settled = pi.records.findLastIndex((record) => record.type === "agent_settled");
      const wake = await pi.waitForRecord(isWake, from, 15_000, "the wake");
      assert.ok(pi.records.indexOf(wake) > settled, "sent after the run settled, not queued inside it");
      assert.match(wakeText(wake), new RegExp(`session ${id} · exit_code 4`));
      await pi.settle();
      assert.equal(wakesSince(from).length, 1);
    });

    it("a line a wake named never wakes again, though the woken model's read leaves it unread (finding 3)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      const reads: string[] = [];
      pi.setWakeScript(
        steps(
          (view) => call("write_stdin", { session_id: sessionIn(view.prompt), until_pattern: "READY", yield_time_ms: 2_000 }),
          (view) => {
            reads.push(view.last[0]!.text);
            return say("saw READY");
          },
        ),
      );
      try {
        const run = await pi.run(
          "start it",
          steps(
            call("exec_command", { cmd: "sleep 1; printf 'READY\\nERROR x\\n'; sleep 300", wake_on_pattern: "ERROR", yield_time_ms: 250 }),
            say("started"),
          ),
        );
        const id = Number(headerOf(run.tools[0]!.text).session_id);
        const wake = await pi.waitForRecord(isWake, from, 15_000, "the first wake");
        assert.match(wakeText(wake), /line: ERROR x/);
        await pi.waitForRecord((record) => record.type === "agent_settled", pi.records.indexOf(wake), 15_000, "the wake's turn");
        assert.equal(outputOf(reads[0]!), "READY\n", "the read stopped at READY: ERROR x stays unread");
        // A second wake of the same line would be due once the 1 s cooldown is over: let it pass, then settle.
        await quietFor(1_200);
        await pi.settle();
        assert.equal(wakesSince(from).length, 1, "one line, one wake");
        await pi.waitIdle();
        await pi.run("stop it", steps(call("kill_session", { session_id: id, signal: "SIGKILL" })));
      } finally {
        pi.setWakeScript(() => say("noted"));
      }
    });

    it("a match as the job's last process ends goes with the exit as one prompt (finding 4)", async () => {
      await pi.waitIdle();
      const from = pi.records.length;
      // The shell exits first; a child it left keeps the job running (issue 37), ticks every 50 ms for
      // 0.5 s and prints ERROR as its last act: the match and the job's end come together.
      const ticks = (n: number) => `for i in $(seq 1 ${n}); do echo tick; sleep 0.05; done`;
      const child = `${ticks(10)}; echo 'ERROR from the child'`;
      const run = await pi.run(
        "start it",
        steps(
          call("exec_command", {
            cmd: `sleep 0.5; (${child}) & exit 5`,
            on_exit: "wake",
            wake_on_pattern: "ERROR",
            yield_time_ms: 250,
          }),
          say("started"),
        ),
      );
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      const wake = await pi.waitForRecord(isWake, from, 20_000, "the wake");
      await pi.settle();
      assert.equal(wakesSince(from).length, 1, "one prompt");
      const text = wakeText(wake);
      assert.match(text, new RegExp(`session ${id} · exit_code 5`));
      assert.match(text, /line: ERROR from the child/);
    });
  });
}
