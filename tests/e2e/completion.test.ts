/**
 * Waiting and completion through the real Pi CLI (RPC mode) on every host: absolute waits, completion
 * wakes delivered exactly once, set_on_exit, kills, and observations inside nested tool calls. "Nothing
 * more" is read once Pi has settled with no wake pending (`PiRpcHost.settle`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, isWake, outputOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { call, callAll, firstSession, type ModelView, say, steps } from "../helpers/scripted-model.ts";

const NESTED = join(REPO_ROOT, "tests", "fixtures", "nested-tool-extension.ts");
const utcIn = (ms: number) => new Date(Date.now() + ms).toISOString();

for (const host of PI_HOSTS) {
  describe(`waiting and completion on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, NESTED, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
    });

    /** Wakes (custom messages) recorded since `from`. */
    const wakesSince = (from: number) => pi.records.slice(from).filter(isWake);

    it("a job armed with wake that exits after the turn starts exactly one new turn naming it; nothing more follows", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "wake me",
        steps(
          call("exec_command", {
            cmd: "sleep 0.5; printf 'never-%s\\n' in-a-wake; sleep 0.5; exit 2",
            yield_time_ms: 250,
            on_exit: "wake",
          }),
          say("started it"),
        ),
      );
      const started = run.tools[0]!;
      assert.equal(headerOf(started.text).completion_notification, "armed");
      const sessionId = headerOf(started.text).session_id!;
      const wake = await pi.waitForRecord(isWake, from, 10_000, "the wake");
      await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 10_000, "the wake's turn to settle");
      assert.match(wake.message.content, new RegExp(`session ${sessionId} · exit_code 2`));
      assert.doesNotMatch(wake.message.content, /never-in-a-wake/, "bounded metadata only, never output");
      await pi.settle();
      assert.equal(wakesSince(from).length, 1, "exactly one wake");
      const turns = pi.records.slice(from).filter((r) => r.type === "agent_start").length;
      assert.equal(turns, 2, "the prompt's run and the wake's run");
      // The wake's job is still readable once, with its status 2 as a normal result, and never wakes again.
      const drain = await pi.run("drain", steps(call("write_stdin", { session_id: Number(sessionId) })));
      assert.equal(drain.tools[0]!.isError, false);
      assert.equal(headerOf(drain.tools[0]!.text).exit_code, "2");
      await pi.settle();
      assert.equal(wakesSince(from).length, 1);
    });

    it("an exit returned by a poll produces no wake", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "poll it",
        steps(call("exec_command", { cmd: "sleep 0.5", yield_time_ms: 250, on_exit: "wake" }), (view) =>
          call("write_stdin", { session_id: firstSession(view) }),
        ),
      );
      assert.equal(headerOf(run.tools[1]!.text).exit_code, "0");
      assert.equal(headerOf(run.tools[1]!.text).on_exit_wake, "consumed");
      await pi.settle();
      assert.deepEqual(wakesSince(from), []);
    });

    it("an exit during an active run is delivered after that run, never in the middle of a turn", async () => {
      const from = pi.records.length;
      await pi.run(
        "busy",
        steps(
          call("exec_command", { cmd: "sleep 0.3", yield_time_ms: 250, on_exit: "wake" }),
          () => call("exec_command", { cmd: "sleep 1.5" }),
          say("busy work done"),
        ),
      );
      const wake = await pi.waitForRecord(isWake, from, 10_000, "the wake");
      const records = pi.records.slice(from);
      const wakeAt = records.indexOf(wake);
      const doneAt = records.findIndex(
        (r) => r.type === "message_end" && r.message?.role === "assistant" && JSON.stringify(r.message.content).includes("busy work done"),
      );
      assert.ok(doneAt !== -1 && wakeAt > doneAt, "the wake came after the run's last turn");
      const lastToolEnd = records.map((r) => r.type).lastIndexOf("tool_execution_end");
      assert.ok(wakeAt > lastToolEnd);
      await pi.waitForRecord((r) => r.type === "agent_settled", from + wakeAt, 10_000);
    });

    it("two jobs exiting within 100 ms produce one prompt listing both", async () => {
      const from = pi.records.length;
      // The test ends both at once: two sleeps of 0.6 and 0.65 s, started one after the other on a
      // busy machine, could end further apart than the batch window.
      const job: [string, Record<string, unknown>] = [
        "exec_command",
        { cmd: "echo $$; exec sleep 300", yield_time_ms: 10_000, until_pattern: "^[0-9]+$", on_exit: "wake" },
      ];
      const run = await pi.run("two", steps(callAll(job, job), say("both started")));
      const ids = run.tools.map((tool) => headerOf(tool.text).session_id);
      const pids = run.tools.map((tool) => Number(outputOf(tool.text).trim()));
      assert.ok(
        pids.every((pid) => pid > 1),
        `the pids: ${pids}`,
      );
      for (const pid of pids) process.kill(pid, "SIGTERM");
      const wake = await pi.waitForRecord(isWake, from, 10_000, "the wake");
      for (const id of ids) assert.match(wake.message.content, new RegExp(`session ${id} ·`));
      await pi.waitForRecord((r) => r.type === "agent_settled", from + pi.records.slice(from).indexOf(wake), 10_000);
      await pi.settle();
      assert.equal(wakesSince(from).length, 1);
    });

    it("set_on_exit none before the exit, and kill_session, mean no wake", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "disarm",
        steps(
          callAll(
            ["exec_command", { cmd: "sleep 0.8", yield_time_ms: 250, on_exit: "wake" }],
            ["exec_command", { cmd: "sleep 300", yield_time_ms: 250, on_exit: "wake" }],
          ),
          (view) =>
            callAll(
              ["set_on_exit", { session_id: view.results[0]!.details.session_id, on_exit: "none" }],
              ["kill_session", { session_id: view.results[1]!.details.session_id }],
              ["set_on_exit", { session_id: 99_999, on_exit: "none" }],
            ),
          // The disarmed job exits during this call: a wake it wrongly kept would be held, then pending at the settle.
          () => call("exec_command", { cmd: "sleep 1.2" }),
          () => call("list_sessions", {}),
        ),
      );
      const calls = inCallOrder(run);
      assert.match(calls[2]!.text, /^\[disarmed\]/);
      assert.equal(calls[2]!.structuredContent.status, "disarmed");
      assert.equal(headerOf(calls[3]!.text).cleanup, "confirmed");
      assert.equal(calls[4]!.structuredContent.found, false);
      const listed = calls[6]!.structuredContent.sessions as { session_id: number; wake_armed: boolean }[];
      assert.ok(listed.every((session) => session.wake_armed === false));
      await pi.settle();
      assert.deepEqual(wakesSince(from), []);
    });

    it("yield_until returns at the exit (completed) or at the deadline, and a later exit still wakes once", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "absolute",
        steps(
          callAll(
            ["exec_command", { cmd: "sleep 1", yield_time_ms: 250 }],
            ["exec_command", { cmd: "sleep 4.5", yield_time_ms: 250, on_exit: "wake" }],
          ),
          (view) =>
            callAll(
              ["write_stdin", { session_id: view.results[0]!.details.session_id, yield_until: utcIn(3_000) }],
              ["write_stdin", { session_id: view.results[1]!.details.session_id, yield_until: utcIn(1_500) }],
            ),
          say("waited"),
        ),
      );
      const [, , completed, deadline] = inCallOrder(run);
      assert.equal(headerOf(completed!.text).wait_mode, "absolute");
      assert.equal(headerOf(completed!.text).wait_status, "completed");
      assert.equal(headerOf(completed!.text).exit_code, "0");
      assert.ok(completed!.durationMs! < 2_500, `${completed!.durationMs} ms`);
      assert.equal(headerOf(deadline!.text).wait_status, "deadline");
      assert.equal(deadline!.text.split("\n")[0], "[still running]");
      assert.ok(deadline!.durationMs! >= 1_000 && deadline!.durationMs! < 3_000, `${deadline!.durationMs} ms`);
      assert.match(headerOf(deadline!.text).tool_time_utc ?? "", /^\d{4}-/);
      const wake = await pi.waitForRecord(isWake, from, 15_000, "the later exit's wake");
      assert.match(wake.message.content, new RegExp(`session ${headerOf(run.tools.find((t) => t.args.on_exit)!.text).session_id} ·`));
      await pi.waitForRecord((r) => r.type === "agent_settled", from + pi.records.slice(from).indexOf(wake), 10_000);
      await pi.settle();
      assert.equal(wakesSince(from).length, 1);
    });

    it("a tool that polls through ctx.executeTool gets a receipt; its own fields survive; the wake is consumed", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "nested",
        steps(call("exec_command", { cmd: "sleep 0.5; exit 4", yield_time_ms: 250, on_exit: "wake" }), (view) =>
          call("nested_poll", { session_id: firstSession(view) }),
        ),
      );
      const nested = run.tools.find((tool) => tool.name === "nested_poll" && !tool.parentToolCallId)!;
      const sessionId = firstSession({ results: [{ details: run.tools[0]!.details }] } as ModelView);
      assert.match(
        nested.text,
        /^script finished\n\[unified-exec receipt: 1 job exit reported inside this call; they will not wake you again\]/,
      );
      assert.match(nested.text, new RegExp(`- session ${sessionId}: exit_code 4, seen by write_stdin`));
      assert.deepEqual(nested.structuredContent, { polls: 2 });
      assert.deepEqual(nested.details, { marker: "nested-details", exitCodes: [4, 4] }, "the second nested read replayed the exit");
      const inner = run.tools.filter((tool) => tool.parentToolCallId === nested.id);
      assert.equal(inner.length, 2);
      await pi.settle();
      assert.deepEqual(wakesSince(from), []);
    });

    it("refuses malformed yield_until, on_exit and combinations, touching nothing", async () => {
      const run = await pi.run(
        "bad waits",
        steps(
          call("exec_command", { cmd: "sleep 300", yield_time_ms: 250 }),
          (view) =>
            callAll(
              ["write_stdin", { session_id: firstSession(view), yield_until: "soon" }],
              ["write_stdin", { session_id: firstSession(view), yield_until: "2030-01-01T00:00:00+01:00" }],
              ["write_stdin", { session_id: firstSession(view), yield_until: "2030-01-01T00:00:00z" }],
              ["write_stdin", { session_id: firstSession(view), yield_until: "2030-02-30T00:00:00Z" }],
              ["write_stdin", { session_id: firstSession(view), yield_until: utcIn(60_000), yield_time_ms: 5_000 }],
              ["write_stdin", { session_id: firstSession(view), yield_until: utcIn(60_000), chars: "x" }],
              ["exec_command", { cmd: ": > bad-on-exit", on_exit: "always" }],
            ),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const refused = inCallOrder(run).slice(1, 8);
      for (const result of refused) assert.equal(result.isError, true, result.text);
      assert.match(refused[0]!.text, /yield_until "soon" is not a strict RFC 3339 UTC timestamp/);
      assert.match(refused[1]!.text, /is not a strict RFC 3339 UTC timestamp/);
      assert.match(refused[2]!.text, /is not a strict RFC 3339 UTC timestamp/);
      assert.match(refused[3]!.text, /is not a real date and time/);
      assert.match(refused[4]!.text, /yield_until is for an empty poll only/);
      assert.match(refused[5]!.text, /yield_until is for an empty poll only/);
      for (const result of refused.slice(0, 6)) assert.match(result.text, /tool_time_utc: \d{4}-/);
      assert.match(refused[6]!.text, /on_exit must be one of "none", "wake", "next_turn", got the string "always"/);
      const killed = inCallOrder(run)[8]!;
      assert.equal(outputOf(killed.text), "", "no refused write reached the job");
      assert.equal(headerOf(killed.text).exit_code, "143");
    });
  });
}

for (const host of PI_HOSTS) {
  describe(`wakes in a print/JSON run on ${host.name}`, () => {
    it("arming says the wake can only come while the run lasts, instead of promising one", async () => {
      const run = await runJson(host, "json wake", steps(call("exec_command", { cmd: "sleep 300", yield_time_ms: 250, on_exit: "wake" })));
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(
        headerOf(run.tools[0]!.text).completion_notification ?? "",
        /^armed, but in this print\/JSON run it can only arrive while the run is still going/,
      );
    });
  });
}
