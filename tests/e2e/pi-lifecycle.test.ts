/**
 * Living inside Pi, through the real CLI (RPC mode) on every host: jobs survive /reload with their
 * ids, output and wakes; /new ends the old session's jobs; the built-in bash is removed unless
 * --keep-builtin-bash; the sessions command works through RPC dialogs; the footer status follows the
 * running jobs.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, type PiEvent } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { call, callAll, say, steps } from "../helpers/scripted-model.ts";

const statusTexts = (records: readonly PiEvent[]) =>
  records
    .filter((r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === "unified-exec")
    .map((r) => r.statusText as string | undefined);

for (const host of PI_HOSTS) {
  describe(`reload and session boundaries on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
    });

    const reload = async (name: string) => {
      const marker = join(pi.dirs.root, name);
      await pi.run(`/test-reload ${marker}`, steps());
      await waitFor(() => existsSync(marker), "the reload to finish", 30_000);
    };

    it("a job started before /reload keeps its id, its output continues without a gap, and its wake fires once after", async () => {
      const from = pi.records.length;
      const run = await pi.run(
        "before reload",
        steps(
          callAll(
            ["exec_command", { cmd: "for i in $(seq 1 40); do echo line $i; sleep 0.05; done", yield_time_ms: 300 }],
            ["exec_command", { cmd: "sleep 2.5; exit 7", yield_time_ms: 250, on_exit: "wake" }],
          ),
          say("started"),
        ),
      );
      const counter = run.tools.find((tool) => String(tool.args.cmd).startsWith("for"))!;
      const before = outputOf(counter.text);
      const counterSession = Number(headerOf(counter.text).session_id);
      assert.ok(counterSession > 0);
      await reload("reloaded-1");
      const after = await pi.run("after reload", steps(call("write_stdin", { session_id: counterSession, yield_time_ms: 10_000 })));
      const polled = after.tools[0]!;
      assert.equal(polled.isError, false, polled.text);
      assert.equal(headerOf(polled.text).exit_code, "0");
      const lines = `${before}${outputOf(polled.text)}`.trim().split("\n");
      assert.deepEqual(
        lines,
        Array.from({ length: 40 }, (_, i) => `line ${i + 1}`),
        "no gap, no repeat across the reload",
      );
      const wake = await pi.waitForRecord(isWake, from, 15_000, "the wake armed before the reload");
      assert.match(wake.message.content, /exit_code 7/);
      await pi.waitForRecord((r) => r.type === "agent_settled", from + pi.records.slice(from).indexOf(wake), 10_000);
      await pi.settle();
      assert.equal(pi.records.slice(from).filter(isWake).length, 1, "exactly once");
    });

    it("the footer status counts running jobs and clears the moment they exit, also after a reload", async () => {
      const from = pi.records.length;
      await pi.run("status", steps(call("exec_command", { cmd: "sleep 1", yield_time_ms: 250 }), say("ok")));
      await waitFor(() => statusTexts(pi.records.slice(from)).includes("unified-exec: 1 session running"), "the running status");
      await waitFor(() => statusTexts(pi.records.slice(from)).at(-1) === undefined, "the status to clear after the exit", 10_000);
      await reload("reloaded-2");
      const afterReload = pi.records.length;
      await pi.run("status again", steps(call("exec_command", { cmd: "sleep 300", yield_time_ms: 250 }), say("ok")));
      await waitFor(
        () => statusTexts(pi.records.slice(afterReload)).includes("unified-exec: 1 session running"),
        "the status after reload",
      );
    });

    it("tree navigation keeps jobs, and a widget above the editor lists them", async () => {
      const run = await pi.run(
        "tree job",
        steps(
          call("exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000, on_exit: "wake" }),
          say("ok"),
        ),
      );
      const id = headerOf(run.tools[0]!.text).session_id;
      const [pid] = pidsIn(outputOf(run.tools[0]!.text));
      const from = pi.records.length;
      await pi.run("/test-tree", steps());
      const widget = await pi.waitForRecord(
        (r) =>
          r.type === "extension_ui_request" &&
          r.method === "setWidget" &&
          r.widgetKey === "unified-exec-jobs" &&
          Array.isArray(r.widgetLines),
        from,
        10_000,
        "the jobs widget",
      );
      assert.equal(widget.widgetPlacement, "aboveEditor");
      assert.ok(
        (widget.widgetLines as string[]).some((line) => line.includes(`${id} · echo $$; sleep 300 [wake]`)),
        JSON.stringify(widget.widgetLines),
      );
      assert.ok(processAlive(pid!), "navigation does not stop jobs");
      // The widget follows the jobs: the killed one leaves it (and with no job left, the widget goes).
      const afterKill = pi.records.length;
      await pi.run("stop tree job", steps(call("kill_session", { session_id: Number(id) })));
      await pi.waitForRecord(
        (r) =>
          r.type === "extension_ui_request" &&
          r.method === "setWidget" &&
          r.widgetKey === "unified-exec-jobs" &&
          !(r.widgetLines as string[] | undefined)?.some((line) => line.includes(`${id} · `)),
        afterKill,
        10_000,
        "the widget to drop the killed job",
      );
    });

    it("/new ends the old session's jobs; nothing of them crosses the boundary", async () => {
      const run = await pi.run(
        "to be ended",
        steps(
          call("exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000, on_exit: "wake" }),
          say("ok"),
        ),
      );
      const [pid] = pidsIn(outputOf(run.tools[0]!.text));
      assert.ok(pid && processAlive(pid));
      const from = pi.records.length;
      const response = await pi.request({ type: "new_session" });
      assert.equal(response.success, true);
      await waitFor(() => !processAlive(pid), "the old session's job to end");
      const listed = await pi.run("list after new", steps(call("list_sessions", {})));
      assert.deepEqual(listed.tools[0]!.structuredContent.sessions, []);
      await pi.settle();
      assert.deepEqual(pi.records.slice(from).filter(isWake), []);
    });
  });

  describe(`the built-in bash tool on ${host.name}`, () => {
    it("is removed by default: a call to bash is an unknown-tool error", async () => {
      const run = await runJson(host, "bash", steps(call("bash", { command: "echo via-bash" })));
      assert.equal(run.tools[0]!.isError, true);
      assert.match(run.tools[0]!.text, /Tool bash not found/);
    });

    it("stays with --keep-builtin-bash", async () => {
      const run = await runJson(host, "bash", steps(call("bash", { command: "echo via-bash" })), { args: ["--keep-builtin-bash"] });
      assert.equal(run.tools[0]!.isError, false, run.tools[0]!.text);
      assert.match(run.tools[0]!.text, /via-bash/);
    });
  });

  describe(`/unified-exec-sessions on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
    });

    it("lists live jobs ([wake] marked), kills a chosen one without waking anyone, and disarms a wake", async () => {
      const run = await pi.run(
        "jobs",
        steps(
          callAll(
            ["exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000, on_exit: "wake" }],
            ["exec_command", { cmd: "echo $$; sleep 300", until_pattern: "^[0-9]+$", yield_time_ms: 20_000, on_exit: "wake" }],
          ),
          say("ok"),
        ),
      );
      const [first, second] = run.tools.map((tool) => ({ id: headerOf(tool.text).session_id!, pid: pidsIn(outputOf(tool.text))[0]! }));
      const requests: PiEvent[] = [];
      pi.onUiRequest((request) => {
        if (request.method !== "select") return undefined;
        requests.push(request);
        const options = request.options as string[];
        if (requests.length === 1) return { value: options.find((o) => o.startsWith(`${first!.id} ·`)) };
        if (requests.length === 2) return { value: options.find((o) => o.startsWith("Kill")) };
        if (requests.length === 3) return { value: options.find((o) => o.startsWith(`${second!.id} ·`)) };
        return { value: options.find((o) => o.startsWith("Disarm")) };
      });
      const from = pi.records.length;
      await pi.run("/unified-exec-sessions", steps());
      await waitFor(() => !processAlive(first!.pid), "the chosen job to be killed");
      assert.match(
        (requests[0]!.options as string[]).join("\n"),
        new RegExp(`^${first!.id} · running \\S+ · echo \\$\\$; sleep 300 \\[wake\\] · \\d+ MB, \\d+ s CPU$`, "m"),
      );
      assert.ok((requests[0]!.options as string[]).includes("Kill all"));
      await pi.run("/unified-exec-sessions", steps());
      await waitFor(() => requests.length === 4, "the disarm dialog");
      await waitFor(
        () => pi.records.slice(from).some((r) => r.method === "notify" && /will not wake the model when it exits/.test(r.message)),
        "the disarm notice",
      );
      assert.ok(processAlive(second!.pid), "disarming leaves the job running");
      const listed = await pi.run("list", steps(call("list_sessions", {})));
      const sessions = listed.tools[0]!.structuredContent.sessions as {
        session_id: number;
        wake_armed: boolean;
        status: string;
        killed_by?: string;
      }[];
      // The killed job is listed once more, saying who stopped it (the model had not heard of it yet).
      assert.deepEqual(
        sessions.map((s) => [s.session_id, s.status, s.killed_by, s.wake_armed]),
        [
          [Number(first!.id), "exited", "user", false],
          [Number(second!.id), "running", undefined, false],
        ],
      );
      await pi.settle();
      assert.deepEqual(pi.records.slice(from).filter(isWake), [], "a kill by the human wakes no one");
      pi.onUiRequest(undefined);
    });
  });

  describe(`/unified-exec-sessions without a UI on ${host.name}`, () => {
    it("posts the listing as a message that does not start a turn", async () => {
      const run = await runJson(host, "/unified-exec-sessions", steps());
      assert.equal(run.exitCode, 0, run.stderr);
      const posted = run.events.find((e) => e.type === "message_end" && e.message?.customType === "unified-exec-sessions");
      assert.ok(posted, JSON.stringify(run.events.map((e) => e.type)));
      assert.match(posted.message.content, /No unified-exec sessions are running\./);
      assert.equal(run.events.filter((e) => e.type === "agent_start").length, 0, "no turn started");
    });
  });
}
