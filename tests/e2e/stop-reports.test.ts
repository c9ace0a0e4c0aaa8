/**
 * True reports through the real Pi CLI on every host: a job the human kills from
 * /unified-exec-sessions (one job, or "Kill all"; dialogs answered over RPC) answers the model's next
 * write_stdin once with `[killed]`, `killed_by: user`, its exit and the output the model had not read,
 * and nobody is woken; then the id is unknown. A fork of the session does the same with
 * `killed_by: boundary`, and new jobs never reuse an old id. Polls of a wake-armed job say
 * `completion_notification: armed` (print/JSON mode: the longer wording).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { headerOf, isWake, outputOf, type ToolRecord } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { runJson } from "../helpers/pi-json.ts";
import { PiRpcHost, PROBE_EXTENSION } from "../helpers/pi-rpc.ts";
import { pidsIn, processAlive, waitFor } from "../helpers/processes.ts";
import { call, callAll, firstSession, say, steps } from "../helpers/scripted-model.ts";

/** Prints its pid and `start` into the first result, then `unread-N` the model has not read yet. */
const JOB = (n: number) => `echo $$; echo start; sleep 0.4; echo unread-${n}; exec sleep 300`;
/** The call returns once the job printed its pid and `start`, however long a busy machine takes to get there. */
const STARTED = { until_pattern: "^start$", yield_time_ms: 20_000 };

interface Started {
  id: number;
  pid: number;
  logPath: string;
}

function started(tool: ToolRecord): Started {
  const header = headerOf(tool.text);
  return { id: Number(header.session_id), pid: pidsIn(outputOf(tool.text))[0]!, logPath: header.log_path! };
}

/** The job printed its unread line (the log has every byte). */
const printedUnread = (job: Started, n: number) => existsSync(job.logPath) && readFileSync(job.logPath, "utf8").includes(`unread-${n}`);

for (const host of PI_HOSTS) {
  describe(`who stopped a job, told to the model, on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE_EXTENSION] });
    });
    after(async () => {
      await pi?.close();
    });

    /** Polls `id` twice: the first answer and what follows it. */
    const pollTwice = (id: number) =>
      pi.run(
        "poll it",
        steps(
          call("write_stdin", { session_id: id, yield_time_ms: 5_000 }),
          call("write_stdin", { session_id: id, yield_time_ms: 5_000 }),
          say("ok"),
        ),
      );

    it("a job the user killed from the picker answers the next write_stdin once with [killed], killed_by: user, its exit and the unread output; then it is unknown; no wake", async () => {
      const run = await pi.run("start", steps(call("exec_command", { cmd: JOB(1), ...STARTED, on_exit: "wake" }), say("ok")));
      const job = started(run.tools[0]!);
      await waitFor(() => printedUnread(job, 1), "the unread line");
      let dialogs = 0;
      pi.onUiRequest((request) => {
        if (request.method !== "select") return undefined;
        dialogs++;
        const options = request.options as string[];
        return { value: dialogs === 1 ? options.find((o) => o.startsWith(`${job.id} ·`)) : options.find((o) => o.startsWith("Kill")) };
      });
      const from = pi.records.length;
      await pi.run("/unified-exec-sessions", steps());
      await waitFor(() => !processAlive(job.pid), "the job to be killed");
      await pi.waitForRecord(
        (r) => r.method === "notify" && new RegExp(`Session ${job.id} stopped \\(exit 143 after`).test(r.message),
        from,
        10_000,
        "the kill notice",
      );
      pi.onUiRequest(undefined);

      const polled = await pollTwice(job.id);
      const [told, after] = polled.tools;
      assert.equal(told!.isError, false, told!.text);
      assert.equal(told!.text.split("\n")[0], "[killed]");
      const header = headerOf(told!.text);
      assert.equal(header.killed_by, "user");
      assert.equal(header.exit_code, "143");
      assert.equal(header.signal, "SIGTERM");
      assert.equal(outputOf(told!.text), "unread-1\n");
      assert.equal(told!.structuredContent.status, "exited");
      assert.equal(told!.structuredContent.killed_by, "user");
      assert.equal(told!.details.killed_by, "user");
      assert.equal(after!.isError, true);
      assert.match(after!.text, new RegExp(`Unknown session_id ${job.id}`));
      await pi.settle();
      assert.deepEqual(pi.records.slice(from).filter(isWake), [], "a kill by the human wakes no one");
    });

    it('"Kill all" stops every job; each id answers once with killed_by: user', async () => {
      const run = await pi.run(
        "start two",
        steps(
          callAll(["exec_command", { cmd: JOB(2), ...STARTED }], ["exec_command", { cmd: JOB(3), ...STARTED, on_exit: "wake" }]),
          say("ok"),
        ),
      );
      const jobs = run.tools.map(started).sort((a, b) => a.id - b.id);
      assert.equal(jobs.length, 2);
      const lineOf = (job: Started) => (readFileSync(job.logPath, "utf8").match(/unread-\d+/) ?? [""])[0];
      await waitFor(() => jobs.every((job) => existsSync(job.logPath) && lineOf(job) !== ""), "both unread lines");
      const asked: string[] = [];
      pi.onUiRequest((request) => {
        if (request.method === "confirm") {
          asked.push(String(request.title));
          return { confirmed: true };
        }
        return request.method === "select" ? { value: (request.options as string[]).find((o) => o === "Kill all") } : undefined;
      });
      const from = pi.records.length;
      await pi.run("/unified-exec-sessions", steps());
      await waitFor(() => jobs.every((job) => !processAlive(job.pid)), "both jobs to be killed");
      pi.onUiRequest(undefined);
      assert.deepEqual(asked, ["Kill all 2 jobs? y/N"], "the person is asked once, with the count");
      const polled = await pi.run(
        "poll both",
        steps(
          callAll(...jobs.map((job) => ["write_stdin", { session_id: job.id, yield_time_ms: 5_000 }] as [string, Record<string, unknown>])),
          say("ok"),
        ),
      );
      for (const job of jobs) {
        const told = polled.tools.find((tool) => tool.args.session_id === job.id)!;
        assert.equal(headerOf(told.text).killed_by, "user", told.text);
        assert.equal(outputOf(told.text), `${lineOf(job)}\n`);
      }
      const listed = await pi.run("list", steps(call("list_sessions", {}), say("ok")));
      assert.deepEqual(listed.tools[0]!.structuredContent.sessions, [], "each was told once, then forgotten");
      await pi.settle();
      assert.deepEqual(pi.records.slice(from).filter(isWake), []);
    });

    it("a fork of the session stops the jobs; the forked conversation's next call on an old id answers once with killed_by: boundary, and new jobs get new ids", async () => {
      const run = await pi.run("start", steps(call("exec_command", { cmd: JOB(4), ...STARTED, on_exit: "wake" }), say("ok")));
      const job = started(run.tools[0]!);
      await waitFor(() => printedUnread(job, 4), "the unread line");
      const from = pi.records.length;
      const cloned = await pi.request({ type: "clone" });
      assert.equal(cloned.success, true, JSON.stringify(cloned));
      await waitFor(() => !processAlive(job.pid), "the boundary to stop the job");
      const polled = await pollTwice(job.id);
      const [told, after] = polled.tools;
      assert.equal(told!.text.split("\n")[0], "[killed]", told!.text);
      assert.equal(headerOf(told!.text).killed_by, "boundary");
      assert.equal(outputOf(told!.text), "unread-4\n");
      assert.match(after!.text, new RegExp(`Unknown session_id ${job.id}`));
      const fresh = await pi.run("again", steps(call("exec_command", { cmd: "sleep 300", yield_time_ms: 250 }), say("ok")));
      assert.ok(Number(headerOf(fresh.tools[0]!.text).session_id) > job.id, fresh.tools[0]!.text);
      await pi.settle();
      assert.deepEqual(pi.records.slice(from).filter(isWake), [], "no wake crosses the boundary");
    });

    // The polls end at the job's next tick: a plain poll of a running job sits its 5 s floor.
    it("a poll of a wake-armed job says completion_notification: armed; after set_on_exit none it does not", async () => {
      const run = await pi.run(
        "arm",
        steps(
          call("exec_command", { cmd: "while :; do echo tick; sleep 0.2; done", yield_time_ms: 250, on_exit: "wake" }),
          (view) => call("write_stdin", { session_id: firstSession(view), until_pattern: "tick", yield_time_ms: 5_000 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "x\n" }),
          (view) => call("set_on_exit", { session_id: firstSession(view), on_exit: "none" }),
          (view) => call("write_stdin", { session_id: firstSession(view), until_pattern: "tick", yield_time_ms: 5_000 }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
          say("ok"),
        ),
      );
      const [, poll, write, , disarmed] = run.tools;
      assert.equal(headerOf(poll!.text).completion_notification, "armed", poll!.text);
      assert.equal(poll!.structuredContent.completion_notification, "armed");
      assert.equal(headerOf(write!.text).completion_notification, "armed", write!.text);
      assert.equal(headerOf(disarmed!.text).completion_notification, undefined, disarmed!.text);
    });
  });

  describe(`armed wakes on polls in print/JSON mode on ${host.name}`, () => {
    it("say that the wake can only arrive while the run lasts", async () => {
      const run = await runJson(
        host,
        "arm",
        steps(
          call("exec_command", { cmd: "while :; do echo tick; sleep 0.2; done", yield_time_ms: 250, on_exit: "wake" }),
          (view) => call("write_stdin", { session_id: firstSession(view), until_pattern: "tick", yield_time_ms: 5_000 }),
          (view) => call("kill_session", { session_id: firstSession(view) }),
          say("ok"),
        ),
      );
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(
        headerOf(run.tools[1]!.text).completion_notification ?? "",
        /^armed, but in this print\/JSON run it can only arrive while the run is still going/,
      );
    });
  });
}
