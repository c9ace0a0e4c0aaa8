/**
 * Waits that end when the work does, through the real Pi CLI on every host: a server's ready line
 * (soon, and after a 40 s start), an unfinished prompt, a line split across writes, the rest read by
 * the next call, the PTY echo, a catastrophic pattern, a bad pattern refused before anything runs,
 * quiet, a steer typed during a long poll, and input_wait.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { call, callAll, firstSession, say, steps } from "../helpers/scripted-model.ts";

const READY_SERVER = "echo starting; sleep 1.5; echo 'ready on :3000'; echo 'GET /health'; sleep 60";

for (const host of PI_HOSTS) {
  describe(`conditional waits on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("a server that prints ready after 1.5 s returns then, matched; the next call reads exactly the rest", async () => {
      const run = await pi.run(
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
    });

    it("matches an unfinished Continue? [y/N] prompt and a line split across two writes 300 ms apart, once", async () => {
      const run = await pi.run(
        "prompts",
        steps(
          call("exec_command", { cmd: "printf 'Continue? [y/N] '; read a; echo got $a", until_pattern: "\\[y/N\\] $" }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "y\n", yield_time_ms: 2_000 }),
          call("exec_command", { cmd: "printf 'all systems '; sleep 0.3; echo go; sleep 30", until_pattern: "systems go" }),
          (view) => call("kill_session", { session_id: view.last[0]!.details.session_id }),
        ),
      );
      const [prompt, answered, split] = inCallOrder(run);
      assert.equal(headerOf(prompt!.text).wait_status, "matched");
      assert.equal(outputOf(prompt!.text), "Continue? [y/N] ");
      assert.match(outputOf(answered!.text), /got y/);
      assert.equal(headerOf(split!.text).matched_line, "all systems go");
      assert.equal(outputOf(split!.text), "all systems go\n");
    });

    it("the typed echo on a PTY never matches", { skip: SKIP_WITHOUT_PTY }, async () => {
      const run = await pi.run(
        "pty echo",
        steps(
          call("exec_command", { cmd: "PS1='$ ' bash --norc --noprofile -i", tty: true, yield_time_ms: 5_000, until_pattern: "\\$ $" }),
          (view) =>
            call("write_stdin", {
              session_id: firstSession(view),
              chars: "sleep 1; echo ready\\r",
              yield_time_ms: 10_000,
              until_pattern: "ready",
            }),
          (view) => call("kill_session", { session_id: firstSession(view), signal: "SIGKILL" }),
        ),
      );
      const typed = inCallOrder(run)[1]!;
      assert.equal(headerOf(typed.text).matched_line, "ready", typed.text);
      assert.ok(typed.durationMs! >= 900, "it waited for the command's line, not the echo");
    });

    it("(a+)+$ against 30 a's answers in milliseconds; an invalid pattern is an error and nothing runs", async () => {
      const marker = join(pi.dirs.cwd, "ran");
      const run = await pi.run(
        "patterns",
        steps(
          call("exec_command", { cmd: `printf '${"a".repeat(30)}!\\n'; echo done`, until_pattern: "(a+)+$" }),
          call("exec_command", { cmd: "touch ran", until_pattern: "(?=x)" }),
          call("exec_command", { cmd: "touch ran", until_pattern: "((" }),
        ),
      );
      const [catastrophic, lookahead, invalid] = inCallOrder(run);
      assert.equal(headerOf(catastrophic!.text).exit_code, "0");
      assert.ok(catastrophic!.durationMs! < 5_000);
      assert.equal(lookahead!.isError, true);
      assert.match(lookahead!.text, /look-?ahead/i);
      assert.equal(invalid!.isError, true);
      assert.match(invalid!.text, /until_pattern/);
      assert.equal(existsSync(marker), false, "nothing ran");
    });

    it("until_quiet_ms: 500 returns once a job that printed for 2 s goes quiet", async () => {
      const run = await pi.run(
        "quiet",
        steps(
          call("exec_command", {
            cmd: "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done; sleep 60",
            until_quiet_ms: 500,
            yield_time_ms: 30_000,
          }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
        ),
      );
      const quiet = inCallOrder(run)[0]!;
      assert.equal(headerOf(quiet.text).wait_status, "quiet");
      assert.match(outputOf(quiet.text), /line 5\n$/);
      assert.ok(quiet.durationMs! >= 2_000 && quiet.durationMs! < 15_000, `took ${quiet.durationMs} ms`);
    });

    it("a steer sent over RPC during a 60 s poll ends it in under a second; the job keeps running", async () => {
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

    for (const tty of [false, true]) {
      it(
        `input_wait: likely for read -p and python3 input() ${tty ? "on a PTY" : "on pipes"}; never for sleep or a CPU loop`,
        { skip: tty && SKIP_WITHOUT_PTY },
        async () => {
          const run = await pi.run(
            "who waits",
            steps(
              // One step: Pi runs the four calls side by side, so their windows overlap.
              // The prompts are waited for (a busy machine may take seconds to print them), then read by a poll.
              callAll(
                // bash prints read's prompt only on a terminal.
                [
                  "exec_command",
                  {
                    cmd: "read -p 'Name: ' n",
                    tty,
                    ...(tty ? { until_pattern: "Name: ", yield_time_ms: 20_000 } : { yield_time_ms: 1_800 }),
                  },
                ],
                ["exec_command", { cmd: `python3 -c 'input("x? ")'`, tty, until_pattern: "x\\? ", yield_time_ms: 20_000 }],
                ["exec_command", { cmd: "sleep 5", tty, yield_time_ms: 1_800 }],
                ["exec_command", { cmd: "while :; do :; done", tty, yield_time_ms: 1_800 }],
              ),
              (view) =>
                callAll(
                  ...view.results
                    .slice(0, 2)
                    .map(
                      (result) =>
                        ["write_stdin", { session_id: result.details.session_id, yield_time_ms: 1_000 }] as [
                          string,
                          Record<string, unknown>,
                        ],
                    ),
                ),
              call("list_sessions", {}),
              (view) =>
                callAll(
                  ...view.results
                    .slice(0, 4)
                    .map(
                      (result) =>
                        ["kill_session", { session_id: result.details.session_id, signal: "SIGKILL" }] as [string, Record<string, unknown>],
                    ),
                ),
            ),
          );
          const [, , sleep, loop, read, python, list] = inCallOrder(run);
          assert.equal(headerOf(read!.text).input_wait, "likely", read!.text);
          assert.ok(read!.details.input_wait_reason);
          assert.equal(headerOf(python!.text).input_wait, "likely", python!.text);
          assert.equal(headerOf(sleep!.text).input_wait, undefined);
          assert.equal(headerOf(loop!.text).input_wait, undefined);
          const listed = list!.structuredContent.sessions as { input_wait?: string }[];
          assert.equal(listed.filter((job) => job.input_wait === "likely").length, 2, list!.text);
        },
      );
    }
  });
}

describe("a server that needs 40 s, on every host at once", () => {
  it("returns at its ready line with yield_time_ms: 60000, matched", async () => {
    await Promise.all(
      PI_HOSTS.map(async (host) => {
        const pi = await PiRpcHost.start(host);
        try {
          const run = await pi.run(
            "start the slow server",
            steps(
              call("exec_command", { cmd: "sleep 40; echo ready; sleep 60", yield_time_ms: 60_000, until_pattern: "^ready$" }),
              (view) => call("kill_session", { session_id: firstSession(view) }),
            ),
            120_000,
          );
          const started = inCallOrder(run)[0]!;
          assert.equal(headerOf(started.text).wait_status, "matched", `${host.name}: ${started.text}`);
          assert.ok(started.durationMs! >= 39_000 && started.durationMs! < 58_000, `${host.name}: took ${started.durationMs} ms`);
        } finally {
          await pi.close();
        }
      }),
    );
  });
});
