/**
 * Supervision through the real Pi CLI on the newest host: hard deadlines, kill_session with
 * evidence, list_sessions, interaction exclusion, capacity, log quotas and storage failures.
 */
import assert from "node:assert/strict";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LOG_TAIL_BYTES } from "../../src/core/log/job-log.ts";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive } from "../helpers/processes.ts";
import { call, callAll, firstSession, say, steps } from "../helpers/scripted-model.ts";

const JOB_QUOTA = 1024 * 1024;

for (const host of NEWEST_HOST_ONLY) {
  describe(`supervision on ${host.name}`, () => {
    let pi: PiRpcHost;
    const escaped: number[] = [];
    before(async () => {
      pi = await PiRpcHost.start(host, { env: { PI_UNIFIED_EXEC_JOB_LOG_QUOTA_BYTES: String(JOB_QUOTA) } });
    });
    after(async () => {
      for (const pid of escaped) if (processAlive(pid)) process.kill(pid, "SIGKILL");
      await pi?.close();
    });

    it("kill_session stops a job with SIGTERM: exit, no escalation, cleanup confirmed", async () => {
      const run = await pi.run(
        "kill",
        steps(call("exec_command", { cmd: "echo up; sleep 300", yield_time_ms: 300 }), (view) =>
          call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const killed = run.tools[1]!;
      assert.equal(killed.isError, false);
      const header = headerOf(killed.text);
      assert.equal(killed.text.split("\n")[0], "[killed]");
      assert.equal(header.signal_sent, "SIGTERM");
      assert.equal(header.escalated, "false");
      assert.equal(header.exit_code, "143");
      assert.equal(header.cleanup, "confirmed");
      assert.equal(killed.structuredContent.cleanup, "confirmed");
    });

    it("a job that ignores SIGTERM is escalated to SIGKILL within ~2.5 s", async () => {
      const run = await pi.run(
        "escalate",
        steps(call("exec_command", { cmd: "trap '' TERM; echo ready; sleep 300 & wait", yield_time_ms: 300 }), (view) =>
          call("kill_session", { session_id: firstSession(view), signal: "term" }),
        ),
      );
      const killed = run.tools[1]!;
      assert.equal(headerOf(killed.text).escalated, "true");
      assert.equal(headerOf(killed.text).signal, "SIGKILL");
      assert.equal(headerOf(killed.text).cleanup, "confirmed");
      assert.ok(killed.durationMs! < 3_500, `${killed.durationMs} ms`);
    });

    it("a grandchild that escaped with setsid leaves the cleanup unconfirmed, and is named", async () => {
      const run = await pi.run(
        "setsid",
        steps(
          // python3 rather than setsid(1), which macOS lacks; it prints its pid once out of the group.
          call("exec_command", {
            cmd: `python3 -c "import os; os.setsid(); print(os.getpid(), flush=True); os.execvp('sleep', ['sleep', '300'])" & sleep 300`,
            // The kill must come after the escape: on a busy machine python3 may take seconds to get there.
            until_pattern: "^[0-9]+$",
            yield_time_ms: 30_000,
          }),
          (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
        ),
      );
      const [grandchild] = pidsIn(outputOf(run.tools[0]!.text));
      escaped.push(grandchild!);
      const header = headerOf(run.tools[1]!.text);
      assert.equal(header.cleanup, "unconfirmed");
      assert.equal(header.survivors, String(grandchild));
    });

    it("refuses unknown signals, numbers and unknown ids, touching nothing; an exit already reported is unknown to it", async () => {
      const run = await pi.run(
        "kill errors",
        steps(
          call("exec_command", { cmd: "sleep 0.4; exit 5", yield_time_ms: 250 }),
          (view) =>
            callAll(
              ["kill_session", { session_id: firstSession(view), signal: "SIGFOO" }],
              ["kill_session", { session_id: firstSession(view), signal: "9" }],
              ["kill_session", { session_id: 99_999 }],
              ["write_stdin", { session_id: firstSession(view), yield_time_ms: 5_000 }],
            ),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const calls = inCallOrder(run);
      const [unknownSignal, numeric, unknownId, waited, afterExit] = calls.slice(1);
      assert.match(unknownSignal!.text, /unknown signal "SIGFOO"\. Accepted: SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGKILL/);
      assert.match(numeric!.text, /signal numbers differ between platforms/);
      assert.match(unknownId!.text, /Unknown session_id 99999/);
      for (const result of [unknownSignal, numeric, unknownId]) assert.equal(result!.isError, true);
      assert.equal(headerOf(waited!.text).exit_code, "5", "the refused kills touched nothing");
      assert.match(afterExit!.text, /Unknown session_id/, "an exit already reported is gone");
    });

    it("timeout_s stops a job at its deadline, reported as timed_out; out-of-range values are refused", async () => {
      const run = await pi.run(
        "timeout",
        steps(
          callAll(
            ["exec_command", { cmd: ": > timeout-0", timeout_s: 0 }],
            ["exec_command", { cmd: ": > timeout-negative", timeout_s: -5 }],
            ["exec_command", { cmd: ": > timeout-huge", timeout_s: 86_401 }],
            ["exec_command", { cmd: "echo started; sleep 300", timeout_s: 1, yield_time_ms: 250 }],
          ),
          (view) =>
            call("write_stdin", { session_id: view.results.find((r) => r.details?.session_id)!.details.session_id, yield_time_ms: 10_000 }),
          () => call("list_sessions", {}),
        ),
      );
      const calls = inCallOrder(run);
      assert.match(calls[0]!.text, /timeout_s must be at least 1, got 0/);
      assert.match(calls[1]!.text, /timeout_s must be at least 1, got -5/);
      assert.match(calls[2]!.text, /timeout_s must be at most 86400, got 86401/);
      const stopped = calls[4]!;
      assert.equal(headerOf(stopped.text).timed_out, "true");
      assert.equal(headerOf(stopped.text).signal, "SIGTERM");
      assert.ok(stopped.durationMs! < 5_000);
      for (const marker of ["timeout-0", "timeout-negative", "timeout-huge"]) assert.ok(!existsSync(join(pi.dirs.cwd, marker)));
    });

    it("list_sessions shows each job with its fields and tool_time_utc; an exited job once more, then never", async () => {
      let listings = 0;
      let sawShortExited = false;
      const run = await pi.run("list", (view) => {
        if (view.turn === 0) {
          return callAll(
            ["exec_command", { cmd: "echo long; sleep 300", yield_time_ms: 300 }],
            ["exec_command", { cmd: "sleep 0.5; echo short", yield_time_ms: 250 }],
          );
        }
        const [long, short] = view.results;
        const last = view.last[0]!;
        // List until the short job shows as exited (a condition, polled by the script), then once more.
        if (last.toolName === "list_sessions") {
          listings++;
          if (sawShortExited) return call("kill_session", { session_id: long!.details.session_id });
          sawShortExited = last.details.sessions.some(
            (s: { session_id: number; status: string }) => s.session_id === short!.details.session_id && s.status === "exited",
          );
        }
        if (last.toolName === "kill_session" || listings > 2_000) return say("done");
        return call("list_sessions", {});
      });
      const [long, short] = inCallOrder(run);
      const lists = run.tools.filter((tool) => tool.name === "list_sessions");
      const first = lists.at(-2)!;
      const second = lists.at(-1)!;
      assert.match(first.text, /^\[2 sessions: 1 running, 1 exited\]\ntool_time_utc: \d{4}-\d\d-\d\dT/);
      const sessions = first.structuredContent.sessions as Record<string, unknown>[];
      const longEntry = sessions.find((s) => s.session_id === long!.details.session_id)!;
      assert.equal(longEntry.status, "running");
      assert.equal(longEntry.command, "echo long; sleep 300");
      assert.equal(longEntry.cwd, pi.dirs.cwd);
      assert.equal(longEntry.tty, false);
      assert.equal(longEntry.output_bytes_total, 5);
      assert.ok(typeof longEntry.quiet_ms === "number" && typeof longEntry.elapsed_seconds === "number");
      assert.match(String(longEntry.log_path), /\/pi-unified-exec-[^/]+\/\d+\.log$/);
      assert.ok(Number(longEntry.deadline_remaining_seconds) > 1_700);
      const shortEntry = sessions.find((s) => s.session_id === short!.details.session_id)!;
      assert.equal(shortEntry.exit_code, 0);
      assert.deepEqual(
        (second.structuredContent.sessions as { session_id: number }[]).map((s) => s.session_id),
        [long!.details.session_id],
      );
    });

    it("one attached call per job: a second write_stdin fails at once; kill_session ends the attached wait", async () => {
      const run = await pi.run(
        "exclusion",
        steps(call("exec_command", { cmd: "sleep 300", yield_time_ms: 250 }), (view) =>
          callAll(
            ["write_stdin", { session_id: firstSession(view), yield_time_ms: 60_000 }],
            ["write_stdin", { session_id: firstSession(view), chars: "x", yield_time_ms: 1_000 }],
            ["kill_session", { session_id: firstSession(view) }],
          ),
        ),
      );
      const [, waiting, second, killed] = inCallOrder(run);
      assert.equal(second!.isError, true);
      assert.match(second!.text, /Session \d+ is busy: a write_stdin call is attached to it/);
      assert.ok(second!.durationMs! < 1_000, "it failed at once");
      assert.equal(headerOf(waiting!.text).exit_code, "143", "the attached wait returned the exit");
      assert.ok(waiting!.durationMs! < 10_000);
      assert.equal(headerOf(killed!.text).cleanup, "confirmed");
    });

    it("a 200 MB flood with a 1 MiB log quota: log ≤ quota + tail, log_partial, exit code still reported", async () => {
      const run = await pi.run(
        "quota",
        steps(call("exec_command", { cmd: "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 99; echo the-end", yield_time_ms: 30_000 })),
      );
      const header = headerOf(run.tools[0]!.text);
      assert.equal(header.exit_code, "0");
      assert.equal(header.log_partial, "true");
      const size = statSync(header.log_path!).size;
      assert.ok(size <= JOB_QUOTA + LOG_TAIL_BYTES + 1_000, `log is ${size} bytes`);
      assert.match(outputOf(run.tools[0]!.text), /the-end\n\n\[Showing the last \d+ of \d+ lines/);
    });

    it("65 live jobs: the 65th is refused before spawning, with a warning before it; the first still answers", async () => {
      const live = Array.from(
        { length: 64 },
        (_, i) => ["exec_command", { cmd: `sleep 300 # ${i}`, yield_time_ms: 250 }] as [string, Record<string, unknown>],
      );
      const run = await pi.run(
        "capacity",
        steps(
          callAll(...live),
          () => call("exec_command", { cmd: ": > capacity-marker" }),
          (view) => call("write_stdin", { session_id: view.results[0]!.details.session_id, chars: "\\n" }),
        ),
      );
      const calls = inCallOrder(run);
      const started = calls.slice(0, 64);
      assert.ok(started.every((result) => !result.isError && result.details.session_id));
      assert.ok(started.some((result) => /warning: 6\d of 64 job slots are in use/.test(result.text)));
      const refused = calls[64]!;
      assert.equal(refused.isError, true);
      assert.match(refused.text, /All 64 job slots hold running jobs, so nothing was started/);
      assert.ok(!existsSync(join(pi.dirs.cwd, "capacity-marker")));
      assert.equal(calls[65]!.isError, false);
      assert.equal(calls[65]!.text.split("\n")[0], "[still running]");
    });
  });

  describe(`a broken log directory on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, {
        setup: (dirs) => {
          const file = join(dirs.root, "not-a-directory");
          writeFileSync(file, "");
          return { PI_UNIFIED_EXEC_LOG_DIR: join(file, "logs") };
        },
      });
    });
    after(async () => {
      await pi?.close();
    });

    it("jobs still run; the missing log is reported; the host survives", async () => {
      const run = await pi.run(
        "no log dir",
        steps(call("exec_command", { cmd: "echo running; sleep 0.3; echo still-running", yield_time_ms: 5_000 }), () =>
          call("exec_command", { cmd: "echo again" }),
        ),
      );
      const [first, second] = run.tools;
      assert.equal(first!.isError, false);
      assert.equal(outputOf(first!.text), "running\nstill-running\n");
      assert.equal(headerOf(first!.text).log_path, "none");
      assert.equal(headerOf(first!.text).log_partial, "true");
      assert.match(first!.details.log_partial_reason, /log directory could not be created: .*ENOTDIR/);
      assert.equal(outputOf(second!.text), "again\n");
    });
  });
}
