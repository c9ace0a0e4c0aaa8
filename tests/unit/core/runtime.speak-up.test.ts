/**
 * Jobs that speak up, through a runtime with real jobs and recorded wakes: wake_on_pattern (a later
 * line wakes once, the matched output stays unread, an attached call's lines never wake, set and
 * disarmed later, refused before anything runs) and the TCP addresses a job listens on. "Once" is
 * read when the runtime has settled with no wake pending; 10 runs beside CPU burners are in
 * `tests/stress/speak-up.test.ts`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { socketAddress } from "../../../src/core/processes/listening.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { waitFor } from "../../helpers/processes.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimesWithWakes, wakesSettled } from "../../helpers/runtime.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);
const tracked = runtimesWithWakes();

describe("wake_on_pattern through the runtime", () => {
  it("a line printed after the call wakes once, with the line, and the next poll returns the unread output around it", async () => {
    const { runtime, patternWakes } = tracked();
    const report = await runtime.exec(
      exec("sleep 1; echo before; echo 'db ERROR: refused'; echo after; sleep 300", { wake_on_pattern: "ERROR" }),
    );
    const id = runningId(report)!;
    assert.equal(report.job.wakePattern, "ERROR");
    await waitFor(() => patternWakes().length > 0, "the pattern wake", 10_000);
    assert.deepEqual(
      patternWakes().map((wake) => [wake.jobId, wake.line, wake.pattern]),
      [[id, "db ERROR: refused", "ERROR"]],
    );
    const poll = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(poll.output.text, "before\ndb ERROR: refused\nafter\n", "the matched output stayed unread");
    await wakesSettled(runtime);
    assert.equal(patternWakes().length, 1, "once");
  });

  it("a line an attached poll returns never wakes", async () => {
    const { runtime, patternWakes } = tracked();
    const id = runningId(await runtime.exec(exec("sleep 1; echo 'ERROR seen by the poll'; sleep 300", { wake_on_pattern: "ERROR" })))!;
    const poll = await runtime.interact({ jobId: id, window: { ms: 3_000 }, until: { pattern: compileUntilPattern("ERROR") } });
    assert.match(poll.output.text, /ERROR seen by the poll/);
    await wakesSettled(runtime);
    assert.deepEqual(patternWakes(), []);
  });

  it("is armed later by set_on_exit and disarmed with null; an exited job is too late", async () => {
    const { runtime, patternWakes } = tracked();
    const id = runningId(await runtime.exec(exec('while read line; do echo "$line"; done')))!;
    assert.deepEqual(runtime.setOnExit(id, { wakePattern: { regex: compileUntilPattern("^go$"), level: "wake" } }), {
      found: true,
      pattern: "armed",
    });
    await runtime.interact({ jobId: id, window: { ms: 250 }, input: { kind: "bytes", bytes: Buffer.from("go\n") } });
    await wakesSettled(runtime);
    assert.deepEqual(patternWakes(), [], "the write's own call returned the echo");
    assert.deepEqual(runtime.setOnExit(id, { wakePattern: null }), { found: true, pattern: "disarmed" });
    assert.deepEqual(runtime.setOnExit(id, { wakePattern: null }), { found: true, pattern: "already_none" });
    assert.equal(runtime.list()[0]!.wakePattern, undefined);
    const done = await runtime.exec(exec("exit 0", { yield_time_ms: 1_000 }));
    assert.deepEqual(runtime.setOnExit(done.job.jobId, { wakePattern: { regex: compileUntilPattern("x"), level: "wake" } }), {
      found: false,
    });
  });

  it("a progress bar redrawn across reads is judged as the model reads it: text drawn over never wakes", async () => {
    const { runtime, patternWakes } = tracked();
    const script =
      "sleep 0.5; printf 'error: retrying\\r'; sleep 0.2; printf 'ok             \\n'; " +
      "for p in 10 50 100; do printf '\\rDownloading %d%%' $p; sleep 0.1; done; echo; sleep 300";
    const id = runningId(await runtime.exec(exec(script, { wake_on_pattern: "error|^Downloading 100%$" })))!;
    await waitFor(() => patternWakes().length > 0, "the pattern wake", 10_000);
    const poll = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(poll.output.text, "ok             \nDownloading 100%\n");
    assert.deepEqual(
      patternWakes().map((wake) => [wake.line, wake.more]),
      [["Downloading 100%", 0]],
    );
  });

  it("a line a call left unread (after its until_pattern match) still wakes once the call lets go", async () => {
    const { runtime, patternWakes } = tracked();
    const id = runningId(
      await runtime.exec(exec("sleep 1; printf 'Compiled\\nERROR in foo.ts\\n'; sleep 300", { wake_on_pattern: "ERROR" })),
    )!;
    const poll = await runtime.interact({ jobId: id, window: { ms: 5_000 }, until: { pattern: compileUntilPattern("Compiled") } });
    assert.equal(poll.output.text, "Compiled\n");
    await waitFor(() => patternWakes().length > 0, "the pattern wake", 5_000);
    assert.deepEqual(
      patternWakes().map((wake) => wake.line),
      ["ERROR in foo.ts"],
    );
    const next = await runtime.interact({ jobId: id, window: { ms: 250 } });
    assert.equal(next.output.text, "ERROR in foo.ts\n", "and the line is still the next poll's");
  });

  it("an unfinished last line is judged when the job exits, with the exit in the same prompt", async () => {
    const { runtime, batches } = tracked();
    const id = runningId(
      await runtime.exec(exec("sleep 0.5; printf 'fatal: no space left'; exit 3", { wake_on_pattern: "^fatal" }), { onExit: "wake" }),
    )!;
    await waitFor(() => batches.length > 0, "the wake", 10_000);
    await wakesSettled(runtime);
    assert.equal(batches.length, 1);
    assert.deepEqual(
      batches[0]!.jobs.map((job) => [job.jobId, job.exitCode]),
      [[id, 3]],
    );
    assert.deepEqual(
      batches[0]!.patterns?.map((wake) => wake.line),
      ["fatal: no space left"],
    );
  });

  it("a bad pattern is refused before anything is spawned", () => {
    for (const [pattern, message] of [
      ["(?=x)", /look-ahead/],
      ["(", /not a valid regular expression/],
      ["", /wake_on_pattern is empty/],
      ["x".repeat(501), /501 characters long/],
    ] as const) {
      assert.throws(() => exec("touch /tmp/never-spawned", { wake_on_pattern: pattern }), message);
    }
  });
});

describe("the addresses a job listens on", () => {
  it("reads /proc/net's addresses: IPv4 and IPv6, any address and loopback", () => {
    assert.equal(socketAddress("0100007F:223D", false), "127.0.0.1:8765");
    assert.equal(socketAddress("00000000:1F90", false), "0.0.0.0:8080");
    assert.equal(socketAddress("00000000000000000000000000000000:1435", true), "[::]:5173");
    assert.equal(socketAddress("00000000000000000000000001000000:0BB8", true), "[::1]:3000");
  });

  /** A server on port 0 of `bind`; with `closeOnLine`, it closes its socket when a line arrives on stdin. */
  const server = (bind: string, closeOnLine = false) =>
    `python3 -c "import socket,sys,time; s=socket.socket(socket.AF_INET6 if ':' in '${bind}' else socket.AF_INET); s.bind(('${bind}',0)); s.listen(); ` +
    `print('port', s.getsockname()[1], flush=True); ${closeOnLine ? "sys.stdin.readline(); s.close(); print('closed', flush=True); " : ""}time.sleep(300)"`;

  it("python's http.server on port 0: the result that saw it start names its real port, the listing too", async () => {
    const { runtime } = tracked();
    const report = await runtime.exec(
      exec("python3 -u -m http.server 0 --bind 127.0.0.1", { yield_time_ms: 10_000, until_pattern: "Serving HTTP on" }),
    );
    const port = /port (\d+)/.exec(report.output.text)?.[1];
    assert.ok(port, report.output.text);
    assert.deepEqual(report.job.listening, [`127.0.0.1:${port}`]);
    assert.equal(report.listeningChanged, true, "news in the result that saw it start");
    const again = await runtime.interact({ jobId: report.job.jobId, window: { ms: 250 } });
    assert.deepEqual(again.job.listening, [`127.0.0.1:${port}`]);
    assert.equal(again.listeningChanged, undefined, "not news any more");
    assert.deepEqual(runtime.list().find((job) => job.jobId === report.job.jobId)?.listening, [`127.0.0.1:${port}`]);
  });

  it("a grandchild's socket counts, one that left the session too; a closed socket leaves the listing", async () => {
    const { runtime } = tracked();
    const nested = await runtime.exec(
      exec(`sh -c 'setsid ${server("::1").replace(/'/g, "'\\''")} & wait'`, { yield_time_ms: 10_000, until_pattern: "port \\d+" }),
    );
    const port = /port (\d+)/.exec(nested.output.text)?.[1];
    assert.deepEqual(nested.job.listening, [`[::1]:${port}`]);
    const direct = await runtime.exec(exec(server("127.0.0.1", true), { yield_time_ms: 10_000, until_pattern: "port \\d+" }));
    const second = /port (\d+)/.exec(direct.output.text)?.[1];
    assert.deepEqual(direct.job.listening, [`127.0.0.1:${second}`]);
    const closed = await runtime.interact({
      jobId: direct.job.jobId,
      window: { ms: 5_000 },
      input: { kind: "bytes", bytes: Buffer.from("\n") },
      until: { pattern: compileUntilPattern("closed") },
    });
    assert.deepEqual(closed.job.listening, []);
    assert.equal(closed.listeningChanged, true);
    const listing = runtime.list();
    assert.deepEqual(listing.find((job) => job.jobId === direct.job.jobId)?.listening, []);
    assert.deepEqual(listing.find((job) => job.jobId === nested.job.jobId)?.listening, [`[::1]:${port}`]);
  });
});
