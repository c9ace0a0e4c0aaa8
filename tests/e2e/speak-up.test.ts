/**
 * Jobs that speak up, through the real Pi CLI (RPC mode): on the newest host, `wake_on_pattern`'s
 * one Pi path (one wake with the line, the output around it left for the woken model's poll,
 * nothing more once Pi settles), a watched test run's second failure waking within 5 s of the edit
 * (the model's call restarts the cooldown) and the read each wake names returning at once, the budget
 * of a pattern the model ignores (wakes a cooldown apart through Pi's turns, ten, the tenth saying it
 * disarmed), `set_on_exit` arming it later and `""` disarming it (the Pi layer's mapping), bad
 * patterns refused, a pattern armed before `/reload` waking after it, and the addresses a job
 * listens on; on every host, the note after a compaction. The rules (a flood of matches as one wake,
 * an attached poll's lines, set later and disarmed, a match and an exit in one prompt) are the unit
 * tests' (`pattern-wakes`, `runtime.speak-up`); escapes in the wake's line are `wake-line.test.ts`'s.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, type PiEvent, textOf } from "../helpers/events.ts";
import { EXTENSION_ENTRY, NEWEST_HOST_ONLY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { FAST_PATTERN_WAKES, PiRpcHost, PROBE_EXTENSION, piForSuite } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { call, firstSession, type ModelView, say, steps } from "../helpers/scripted-model.ts";

const COMPACT = join(REPO_ROOT, "tests", "fixtures", "compact-extension.ts");
const wakeText = (record: PiEvent) => textOf(record.message.content);
const patternWake = (record: PiEvent) => isWake(record) && /printed a line matching|news:/.test(wakeText(record));
const sessionIn = (text: string) => Number(/session (\d+)/.exec(text)?.[1]);

for (const host of NEWEST_HOST_ONLY) {
  describe(`wake_on_pattern and listening addresses on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
    });
    const wakesSince = (from: number) => pi.records.slice(from).filter(isWake);
    /** Waits for the turns wakes started to settle: a prompt sent meanwhile would be refused. */
    const idle = () => pi.waitIdle();
    const start = async (args: Record<string, unknown>) => {
      await idle();
      const run = await pi.run("start it", steps(call("exec_command", { yield_time_ms: 250, ...args }), say("started")));
      return run.tools[0]!;
    };
    const stop = async (sessionId: number) => {
      await idle();
      await pi.run("stop it", steps(call("kill_session", { session_id: sessionId, signal: "SIGKILL" })));
    };

    it("a server that prints ERROR 2.5 s after the turn wakes the model once with the line, and its poll reads the unread output around it", async () => {
      const from = pi.records.length;
      const polled: string[] = [];
      pi.setWakeScript(
        steps(
          (view) => call("write_stdin", { session_id: sessionIn(view.prompt), until_pattern: "^after$", yield_time_ms: 5_000 }),
          (view) => {
            polled.push(view.last[0]!.text);
            return say("read it");
          },
        ),
      );
      try {
        const started = await start({
          cmd: "sleep 2.5; echo before; echo 'db ERROR: connection refused'; echo after; sleep 300",
          wake_on_pattern: "ERROR",
        });
        assert.equal(headerOf(started.text).wake_on_pattern, "armed");
        const id = Number(headerOf(started.text).session_id);
        const wake = await pi.waitForRecord(patternWake, from, 15_000, "the pattern wake");
        const text = wakeText(wake);
        assert.match(text, new RegExp(`session ${id} printed a line matching /ERROR/`));
        assert.match(text, /line: db ERROR: connection refused/);
        assert.doesNotMatch(text, /^(before|after)$/m, "never other output");
        assert.equal(text.split("\n").filter((line) => line.includes("connection refused")).length, 2, "the command and the one line");
        await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(wake), 15_000, "the wake's turn");
        assert.equal(outputOf(polled[0]!), "before\ndb ERROR: connection refused\nafter\n");
        await pi.settle();
        assert.equal(wakesSince(from).length, 1);
        await stop(id);
      } finally {
        pi.setWakeScript(() => say("noted"));
      }
    });

    it("a watched test run's second failure wakes within 5 s of the edit that caused it, and the read each wake names returns at once", async () => {
      const dir = mkdtempSync(join(tmpdir(), "piue-watch-"));
      const from = pi.records.length;
      const reads: { id: number; ms: number; output: string }[] = [];
      let asked = 0;
      // The model makes the read the wake names, exactly as written there.
      pi.setWakeScript(
        steps(
          (view) => {
            const named = /write_stdin\(session_id: (\d+), until_quiet_ms: (\d+)\)/.exec(view.prompt);
            assert.ok(named, `the wake names its read:\n${view.prompt}`);
            asked = performance.now();
            return call("write_stdin", { session_id: Number(named[1]), until_quiet_ms: Number(named[2]) });
          },
          (view) => {
            reads.push({ id: 0, ms: performance.now() - asked, output: outputOf(view.last[0]!.text) });
            return say("read it");
          },
        ),
      );
      try {
        // A watcher: each edit (here, the file `edited` appearing) runs the tests again, which fail.
        const watcher = "while :; do if [ -e edited ]; then rm -f edited; echo 'FAIL src/a.test.ts'; echo ' 1 failed'; fi; sleep 0.1; done";
        const started = await start({ cmd: watcher, workdir: dir, wake_on_pattern: "FAIL" });
        const id = Number(headerOf(started.text).session_id);
        writeFileSync(join(dir, "edited"), "");
        const first = await pi.waitForRecord(patternWake, from, 15_000, "the first failure's wake");
        await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(first), 15_000, "the first wake's turn");
        const edited = performance.now();
        writeFileSync(join(dir, "edited"), "");
        const second = await pi.waitForRecord(patternWake, pi.records.indexOf(first) + 1, 15_000, "the second failure's wake");
        const after = performance.now() - edited;
        assert.ok(after < 5_000, `the second wake came ${Math.round(after)} ms after the edit`);
        await pi.waitForRecord((r) => r.type === "agent_settled", pi.records.indexOf(second), 15_000, "the second wake's turn");
        assert.equal(reads.length, 2);
        for (const read of reads) {
          assert.equal(read.output, "FAIL src/a.test.ts\n 1 failed\n");
          assert.ok(read.ms < 3_000, `the named read took ${Math.round(read.ms)} ms (a plain poll sits 5 s)`);
        }
        await stop(id);
      } finally {
        pi.setWakeScript(() => say("noted"));
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('set_on_exit arms it later, list_sessions shows it, and "" disarms it', async () => {
      const from = pi.records.length;
      // The line comes once the test says so, after the arming: on a busy machine a fixed 2 s came first.
      const go = join(pi.dirs.root, `go-${Date.now()}`);
      const started = await start({ cmd: `until [ -e ${go} ]; do sleep 0.05; done; echo READY now; sleep 300` });
      const id = Number(headerOf(started.text).session_id);
      await idle();
      const armed = await pi.run(
        "arm it",
        steps(call("set_on_exit", { session_id: id, wake_on_pattern: "READY" }), call("list_sessions", {}), say("armed")),
      );
      assert.equal(headerOf(armed.tools[0]!.text).wake_on_pattern_status, "armed");
      assert.match(armed.tools[1]!.text, /wake_on_pattern: READY/);
      writeFileSync(go, "");
      const wake = await pi.waitForRecord(patternWake, from, 15_000, "the wake");
      assert.match(wakeText(wake), /line: READY now/);
      await idle();
      const disarm = await pi.run(
        "disarm it",
        steps(call("set_on_exit", { session_id: id, wake_on_pattern: "" }), call("set_on_exit", { session_id: id, wake_on_pattern: "" })),
      );
      assert.equal(headerOf(disarm.tools[0]!.text).wake_on_pattern_status, "disarmed");
      assert.equal(headerOf(disarm.tools[1]!.text).wake_on_pattern_status, "already_none");
      await stop(id);
    });

    it("a bad pattern spawns nothing and changes nothing", async () => {
      const marker = join(pi.dirs.root, "never-spawned");
      await idle();
      const run = await pi.run(
        "bad patterns",
        steps(
          call("exec_command", { cmd: `touch ${marker}`, wake_on_pattern: "(?=x)" }),
          call("exec_command", { cmd: `touch ${marker}`, wake_on_pattern: "(" }),
          call("exec_command", { cmd: "sleep 300", on_exit: "wake", yield_time_ms: 250 }),
          (view) => call("set_on_exit", { session_id: view.last[0]!.details.session_id, wake_on_pattern: "a\\1" }),
          () => call("list_sessions", {}),
        ),
      );
      assert.equal(run.tools[0]!.isError, true);
      assert.match(run.tools[0]!.text, /wake_on_pattern uses look-ahead .*Nothing was started/);
      assert.match(run.tools[1]!.text, /wake_on_pattern is not a valid regular expression/);
      assert.equal(existsSync(marker), false);
      assert.equal(run.tools[3]!.isError, true);
      assert.match(run.tools[3]!.text, /back-reference.*Nothing was changed/);
      assert.doesNotMatch(run.tools[4]!.text, /wake_on_pattern/);
      assert.match(run.tools[4]!.text, /exit_wake: armed/, "the exit wake is as it was");
      await stop(Number(headerOf(run.tools[2]!.text).session_id));
    });

    it("a pattern armed before /reload still wakes after it", async () => {
      const from = pi.records.length;
      const started = await start({ cmd: "sleep 4; echo 'ERROR after reload'; sleep 300", wake_on_pattern: "ERROR" });
      const marker = join(pi.dirs.root, "reloaded-pattern");
      await idle();
      await pi.run(`/test-reload ${marker}`, steps());
      await waitFor(() => existsSync(marker), "the reload", 30_000);
      const wake = await pi.waitForRecord(patternWake, from, 15_000, "the wake after reload");
      assert.match(wakeText(wake), /line: ERROR after reload/);
      await stop(Number(headerOf(started.text).session_id));
    });

    it("http.server on port 0: its real port in the result that saw it start and in list_sessions; a grandchild's socket counts", async () => {
      const run = await pi.run(
        "serve",
        steps(
          call("exec_command", {
            cmd: "python3 -u -m http.server 0 --bind 127.0.0.1",
            until_pattern: "Serving HTTP",
            yield_time_ms: 15_000,
          }),
          call("exec_command", {
            cmd: "sh -c 'python3 -u -m http.server 0 --bind 127.0.0.1 & wait'",
            until_pattern: "Serving HTTP",
            yield_time_ms: 15_000,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), yield_time_ms: 250 }),
          call("list_sessions", {}),
        ),
      );
      const [first, second, poll, list] = run.tools;
      const port = /port (\d+)/.exec(outputOf(first!.text))?.[1];
      assert.equal(headerOf(first!.text).listening, `127.0.0.1:${port}`);
      assert.deepEqual(first!.structuredContent.listening, [`127.0.0.1:${port}`]);
      const nested = /port (\d+)/.exec(outputOf(second!.text))?.[1];
      assert.equal(headerOf(second!.text).listening, `127.0.0.1:${nested}`);
      assert.equal(headerOf(poll!.text).listening, undefined, "only news in the text");
      assert.deepEqual(poll!.structuredContent.listening, [`127.0.0.1:${port}`]);
      assert.match(list!.text, new RegExp(`listening: 127\\.0\\.0\\.1:${port}`));
      assert.match(list!.text, new RegExp(`listening: 127\\.0\\.0\\.1:${nested}`));
    });

    it("a closed socket leaves the listing", async () => {
      const server =
        "python3 -c \"import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print('port', s.getsockname()[1], flush=True); " +
        "sys.stdin.readline(); s.close(); print('closed', flush=True); time.sleep(300)\"";
      const run = await pi.run(
        "close it",
        steps(
          call("exec_command", { cmd: server, until_pattern: "port \\d+", yield_time_ms: 15_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\n", until_pattern: "closed", yield_time_ms: 5_000 }),
          call("list_sessions", {}),
        ),
      );
      const port = /port (\d+)/.exec(outputOf(run.tools[0]!.text))?.[1];
      assert.equal(headerOf(run.tools[0]!.text).listening, `127.0.0.1:${port}`, run.tools[0]!.text);
      assert.equal(headerOf(run.tools[1]!.text).listening, "none");
      assert.doesNotMatch(run.tools[2]!.text, new RegExp(`:${port}`));
    });
  });

  describe(`wake_on_pattern's budget, with a 1 s cooldown, on ${host.name}`, () => {
    let pi: PiRpcHost;
    piForSuite(host, FAST_PATTERN_WAKES, (started) => {
      pi = started;
    });

    it("a pattern the model ignores wakes exactly ten times; the tenth says it disarmed", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "noisy",
        steps(
          call("exec_command", { cmd: "while true; do echo 'ERROR tick'; sleep 0.2; done", wake_on_pattern: "ERROR", yield_time_ms: 250 }),
          say("ok"),
        ),
      );
      const id = Number(headerOf(run.tools[0]!.text).session_id);
      const wakes = () => pi.records.slice(from).filter(isWake);
      // Nobody calls on the job: it matches five times a second, and it wakes the model once per cooldown.
      const first = await pi.waitForRecord(isWake, from, 15_000, "the first wake");
      const firstAt = performance.now();
      await waitFor(() => wakes().length >= 10, "ten wakes", 60_000, 20);
      const spread = performance.now() - firstAt;
      assert.ok(spread >= 8_000, `ten wakes within ${Math.round(spread)} ms of each other, the cooldown being 1 s`);
      assert.equal(wakes()[0], first);
      await pi.settle();
      assert.equal(wakes().length, 10);
      assert.match(wakeText(wakes()[9]!), /wake_on_pattern disarmed after 10 wakes: set_on_exit to arm it again/);
      for (const wake of wakes().slice(0, 9)) assert.doesNotMatch(wakeText(wake), /disarmed/);
      const listing = await pi.run("list", steps(call("list_sessions", {}), call("kill_session", { session_id: id, signal: "SIGKILL" })));
      assert.doesNotMatch(listing.tools[0]!.text, /wake_on_pattern/);
    });
  });
}

for (const host of PI_HOSTS) {
  describe(`the note after a compaction on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, {
        extensions: [EXTENSION_ENTRY, COMPACT, PROBE_EXTENSION],
        setup: (dirs) => {
          writeFileSync(join(dirs.agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
          return undefined;
        },
      });
    });
    after(async () => {
      await pi?.close();
    });

    it("after a compaction the next request lists the live jobs and those that exited unread once, and triggers no turn", async () => {
      const seen: ModelView[] = [];
      const marker = join(pi.dirs.logs, "..", `ended-${Date.now()}`);
      await pi.run(
        "serve",
        steps(
          call("exec_command", { cmd: "sleep 300", wake_on_pattern: "ERROR", on_exit: "wake", yield_time_ms: 250 }),
          call("exec_command", { cmd: `sleep 0.5; touch '${marker}'; exit 3`, yield_time_ms: 250 }),
          say("ok"),
        ),
      );
      await waitFor(() => existsSync(marker), "the second job's end");
      const before = pi.records.length;
      const compacted = await pi.request({ type: "compact" });
      assert.equal(compacted.success, true, JSON.stringify(compacted));
      await pi.settle();
      assert.equal(pi.records.slice(before).filter((r) => r.type === "agent_start").length, 0, "no turn");
      const note = (view: ModelView) =>
        view.messages
          .map((message) => textOf((message as { content?: unknown }).content))
          .find((text) => text.startsWith("[unified-exec jobs]"));
      await pi.run("what runs?", (view) => {
        seen.push(view);
        return say("I know");
      });
      await pi.run("and now?", (view) => {
        seen.push(view);
        return say("still");
      });
      const listed = note(seen[0]!);
      assert.ok(listed, "the first request after the compaction carries the note");
      assert.match(listed, /session_id \d+ · running .* · `sleep 300` · wakes armed: on_exit, \/ERROR\//);
      assert.match(
        listed,
        /\nThese jobs you started have exited; you have not read their end yet \(write_stdin reads it once\):\n- session_id \d+ · exited 3 · `sleep 0\.5; touch /,
      );
      assert.equal(note(seen[1]!), undefined, "once per compaction");
    });
  });
}
