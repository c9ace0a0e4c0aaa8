/**
 * `until_listening` through the runtime with real servers (Linux reads the sockets from /proc): a
 * wait that ends within ~0.3 s of the bind and names the address, a port that ends it and another
 * that does not, a new address on a job that already listens, the exit and the window's end, a
 * pattern beside it, only the waiting job scanned, bad values refused before anything runs. The
 * bind timing again beside CPU burners: `tests/stress/waits.test.ts`.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ListeningPorts } from "../../../src/core/processes/listening.ts";
import { listeningSockets } from "../../../src/core/processes/socket-tables.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { bindLag, bindServer, binds, freePort } from "../../helpers/bind-server.ts";
import { runningId } from "../../helpers/reports.ts";

const SKIP = process.platform !== "linux" ? "reads sockets from /proc (Linux)" : false;
const dir = mkdtempSync(join(tmpdir(), "until-listening-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 20_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);

let stamps = 0;
const stampFile = () => join(dir, `bind-${++stamps}`);

describe("until_listening", { skip: SKIP }, () => {
  it("true returns within ~0.3 s of the server's bind, naming the address", async () => {
    const runtime = new ExecRuntime();
    const lag = await bindLag(runtime, stampFile());
    assert.ok(lag < 300, `returned ${lag} ms after the bind`);
    await runtime.shutdown();
  });

  it("a server that binds, then listens 1.5 s later ends the wait at its listen, naming the address", async () => {
    const runtime = new ExecRuntime();
    const stamp = stampFile();
    const report = await runtime.exec(
      exec(bindServer({ ports: [0], delay: 0.2, listenAfter: 1.5, stamp }), { until_listening: true, yield_time_ms: 10_000 }),
    );
    const [[port, listened]] = binds(stamp) as [[number, number]];
    assert.equal(report.waitEnd, "listening", JSON.stringify(report.job.listening));
    assert.deepEqual(report.job.listening, [`127.0.0.1:${port}`]);
    assert.ok(Date.now() - listened < 2_000, `returned ${Date.now() - listened} ms after the listen`);
    await runtime.shutdown();
  });

  it("a port probe closed right after a check saw it does not end the wait; the real listen after it does, named", async () => {
    const runtime = new ExecRuntime();
    const port = await freePort();
    const stamp = stampFile();
    const address = `127.0.0.1:${port}`;
    // Listens on the port until told (SIGUSR1), closes it, and a second later listens on it for real (vite, get-port).
    const server = [
      "import signal,socket,time",
      "probe=socket.socket(); probe.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)",
      `probe.bind(('127.0.0.1',${port})); probe.listen()`,
      "closed=[]",
      "signal.signal(signal.SIGUSR1, lambda *_: (probe.close(), closed.append(1)))",
      "while not closed: time.sleep(0.01)",
      "time.sleep(1)",
      "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)",
      `s.bind(('127.0.0.1',${port})); s.listen()`,
      `open('${stamp}','a').write('%d %d\\n' % (${port}, time.time()*1000))`,
      "time.sleep(300)",
    ].join("\n");
    // The first check that sees the probe has the server close it before the check's answer is used.
    const scan = ListeningPorts.prototype.scan;
    let probeClosed = false;
    ListeningPorts.prototype.scan = function (jobs, fresh, running) {
      const result = scan.call(this, jobs, fresh, running);
      const job = jobs.find((candidate) => result?.get(candidate.jobId)?.includes(address));
      if (job && !probeClosed) {
        probeClosed = true;
        process.kill(job.leader, "SIGUSR1");
        const deadline = performance.now() + 5_000;
        while ([...(listeningSockets()?.values() ?? [])].includes(address) && performance.now() < deadline);
      }
      return result;
    };
    try {
      const report = await runtime.exec(
        exec(`exec python3 -c "${server.replace(/"/g, '\\"')}"`, { until_listening: port, yield_time_ms: 10_000 }),
      );
      assert.ok(probeClosed, "a check saw the probe");
      assert.equal(report.waitEnd, "listening");
      assert.deepEqual(report.job.listening, [address], "the result names the address that ended the wait");
      assert.equal(binds(stamp).length, 1, "ended at the real listen");
    } finally {
      ListeningPorts.prototype.scan = scan;
      await runtime.shutdown();
    }
  });

  it("a port waits for that port and not another the job binds first", async () => {
    const runtime = new ExecRuntime();
    const port = await freePort();
    const stamp = stampFile();
    const report = await runtime.exec(exec(bindServer({ ports: [0, port], delay: 0.3, gap: 1.5, stamp }), { until_listening: port }));
    const [[other], [target, bound]] = binds(stamp) as [[number, number], [number, number]];
    assert.equal(target, port);
    assert.equal(report.waitEnd, "listening");
    assert.ok(Date.now() - bound < 1_000, "at the second bind");
    assert.deepEqual(
      report.job.listening,
      [`127.0.0.1:${other}`, `127.0.0.1:${port}`].sort((a, b) => Number(a.split(":")[1]) - Number(b.split(":")[1])),
    );
    await runtime.shutdown();
  });

  it("write_stdin true waits for an address the job did not hold when the call began", async () => {
    const runtime = new ExecRuntime();
    const stamp = stampFile();
    const started = await runtime.exec(exec(bindServer({ ports: [0, 0], delay: 0, gap: 1.5, stamp }), { until_listening: true }));
    const [[first]] = binds(stamp) as [[number, number]];
    assert.equal(started.waitEnd, "listening");
    const t0 = performance.now();
    const next = await runtime.interact(write(runningId(started)!, { yield_time_ms: 10_000, until_listening: true }));
    const [, [second]] = binds(stamp) as [[number, number], [number, number]];
    assert.equal(
      next.waitEnd,
      "listening",
      `${JSON.stringify(next.job.listening)} ${JSON.stringify(binds(stamp))} ${JSON.stringify(started.job.listening)}`,
    );
    assert.ok(performance.now() - t0 > 800, "not the address it already held");
    assert.ok(next.job.listening?.includes(`127.0.0.1:${second}`), String(next.job.listening));
    assert.ok(next.job.listening?.includes(`127.0.0.1:${first}`));
    // A port already listened on ends the wait at once.
    const again = await runtime.interact(write(runningId(started)!, { yield_time_ms: 10_000, until_listening: first }));
    assert.equal(again.waitEnd, "listening");
    assert.ok(again.wallMs < 5_000);
    await runtime.shutdown();
  });

  it("an exit first ends the wait with the exit; the window's end is a deadline; a pattern first wins", async () => {
    const runtime = new ExecRuntime();
    const exited = await runtime.exec(exec("sleep 0.5; exit 3", { until_listening: true }));
    assert.equal(exited.waitEnd, "exited");
    assert.equal(exited.job.exit?.exitCode, 3);
    const deadline = await runtime.exec(exec("sleep 30", { until_listening: true, yield_time_ms: 1_000 }));
    assert.equal(deadline.waitEnd, "deadline");
    assert.equal(deadline.conditional, true);
    const matched = await runtime.exec(
      exec(`echo starting; ${bindServer({ ports: [0], delay: 2, stamp: stampFile() })}`, {
        until_listening: true,
        until_pattern: "starting",
      }),
    );
    assert.equal(matched.waitEnd, "matched");
    await runtime.shutdown();
  });

  it("a conditional wait lets exec's window go to 300 s", () => {
    assert.equal(exec("true", { until_listening: true, yield_time_ms: 300_000 }).window.ms, 300_000);
    assert.equal(exec("true", { until_listening: false, yield_time_ms: 300_000 }).window.ms, 30_000, "false is no condition");
  });

  it("only the waiting job's sockets are read while it waits", async () => {
    const runtime = new ExecRuntime();
    const other = await runtime.exec(exec("sleep 30", { yield_time_ms: 250 }));
    const scans: number[][] = [];
    const scan = ListeningPorts.prototype.scan;
    ListeningPorts.prototype.scan = function (jobs) {
      scans.push(jobs.map((job) => job.jobId));
      return scan.call(this, jobs);
    };
    try {
      const waiting = await runtime.exec(exec("sleep 30", { until_listening: true, yield_time_ms: 1_000 }));
      const id = runningId(waiting)!;
      assert.ok(scans.length >= 3 && scans.length <= 14, `${scans.length} scans in 1 s`);
      assert.ok(
        scans.every((jobs) => jobs.length === 1 && jobs[0] === id),
        JSON.stringify(scans),
      );
      assert.notEqual(id, runningId(other));
    } finally {
      ListeningPorts.prototype.scan = scan;
    }
    await runtime.shutdown();
  });

  it("a bad value is refused before anything runs", async () => {
    const marker = join(dir, "never");
    for (const value of [0, 70_000, "abc", 1.5]) {
      assert.throws(() => exec(`touch ${marker}`, { until_listening: value }), ExecRequestError);
      assert.throws(() => write(1, { until_listening: value }), /Nothing was written\.$/);
    }
    assert.equal(existsSync(marker), false);
  });
});
