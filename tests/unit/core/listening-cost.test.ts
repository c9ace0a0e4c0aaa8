/**
 * Port scans cost what the SPEC says: the socket tables are read only when a job holds a socket not
 * yet looked at, or one not listening that is due for another look (1, 2, 4, then every 8 s while
 * held, so a server that binds long before it listens is seen); only their listening part is read;
 * and a process is attributed by its job's marker whatever its parent is (a subreaper).
 */
import assert from "node:assert/strict";
import fs, { readdirSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { after, describe, it } from "node:test";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { jobOwners, ListeningPorts } from "../../../src/core/processes/listening.ts";
import { type ProcessEntry, processTable } from "../../../src/core/processes/process-table.ts";
import { listeningSockets, socketTableReads } from "../../../src/core/processes/socket-tables.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { waitFor } from "../../helpers/processes.ts";
import { socketCrowd } from "../../helpers/sockets.ts";

const linux = process.platform === "linux";

/** How many times `name` of node:fs is called on each of `paths` while `during` runs. */
function fsCalls(name: "readdirSync" | "statSync", paths: string[], during: () => void): number[] {
  const calls = paths.map(() => 0);
  const original = fs[name];
  (fs as Record<string, unknown>)[name] = (target: unknown, ...rest: unknown[]) => {
    const at = paths.indexOf(target as string);
    if (at !== -1) calls[at]!++;
    return (original as (...args: unknown[]) => unknown)(target, ...rest);
  };
  syncBuiltinESMExports();
  try {
    during();
  } finally {
    (fs as Record<string, unknown>)[name] = original;
    syncBuiltinESMExports();
  }
  return calls;
}
const entry = (pid: number, ppid: number, sid: number): ProcessEntry => ({
  pid,
  ppid,
  pgid: sid,
  sid,
  zombie: false,
  startInTicks: true,
  start: "1",
});

describe("which job a process belongs to", () => {
  const jobs = [{ jobId: 7, leader: 100, groups: [100] }];

  it("a process that left the job's session under a subreaper is the job's by its marker; by session and parents first", () => {
    const table = [
      entry(1, 0, 1),
      entry(4242, 1, 4242), // a subreaper (systemd --user), no job's
      entry(100, 50, 100), // the job's leader
      entry(101, 100, 100), // in the job's session
      entry(300, 4242, 300), // `(setsid server &)`: re-parented to the subreaper
      entry(301, 300, 300), // its worker: found through its parent
      entry(400, 4242, 400), // an unrelated process under the same subreaper
    ];
    const markers = new Map([[300, 7]]);
    const asked: number[] = [];
    const owners = jobOwners(jobs, table, (process) => {
      asked.push(process.pid);
      return markers.get(process.pid);
    });
    assert.deepEqual(
      owners.map(([process, job]) => [process.pid, job]).sort((a, b) => a[0]! - b[0]!),
      [
        [100, 7],
        [101, 7],
        [300, 7],
        [301, 7],
      ],
    );
    assert.ok(!asked.includes(101), "a process the job's session holds needs no marker");
  });
});

describe("reads of the socket tables", { skip: !linux && "Linux only" }, () => {
  const runtime = new ExecRuntime();
  after(() => runtime.shutdown());
  /** A server that also holds both ends of one connection (a dev server with a browser tab); a line on stdin opens one more. */
  const SERVER =
    "python3 -c \"import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); " +
    "c=socket.create_connection(s.getsockname()); a=s.accept(); print('port', s.getsockname()[1], flush=True); " +
    "sys.stdin.readline(); d=socket.create_connection(s.getsockname()); b=s.accept(); print('more', flush=True); time.sleep(300)\"";

  it("a job's accepted and client sockets are looked at again 1, 2, 4, then every 8 s while held; a new socket at once", async () => {
    const report = await runtime.exec(
      prepareExec({ cmd: SERVER, yield_time_ms: 10_000, until_pattern: "port \\d+" }, process.cwd(), process.env),
    );
    const port = /port (\d+)/.exec(report.output.text)?.[1];
    assert.ok(port, report.output.text);
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    const jobs = [{ jobId: job.id, leader: job.pid!, groups: job.groups() }];
    let now = 0;
    const ports = new ListeningPorts("none:", "linux", () => now);
    let result: Map<number, string[]> | undefined;
    const reads = () => {
      const before = socketTableReads();
      result = ports.scan(jobs);
      return socketTableReads() - before;
    };
    const readAt: number[] = [];
    for (now = 0; now <= 31_000; now += 500) if (reads() > 0) readAt.push(now);
    assert.deepEqual(readAt, [0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000]);
    assert.deepEqual(result?.get(job.id), [`127.0.0.1:${port}`]);
    await runtime.interact({
      jobId: job.id,
      window: { ms: 5_000 },
      input: { kind: "bytes", bytes: Buffer.from("\n") },
      until: { pattern: compileUntilPattern("more") },
    });
    now += 10_000; // the descriptors' count is trusted for 2 s: past it they are read again
    assert.equal(reads(), 1, "a new connection: one look");
    assert.equal(reads(), 0);
  });

  it("a socket bound long before it listens is seen at the first look after its listen", async () => {
    // Binds, then listens only when told (a line on stdin): uvicorn --reload binds in one process, listens in another.
    const server =
      "python3 -c \"import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',0)); print('bound', s.getsockname()[1], flush=True); " +
      "sys.stdin.readline(); s.listen(); print('listening', flush=True); time.sleep(300)\"";
    const report = await runtime.exec(
      prepareExec({ cmd: server, yield_time_ms: 10_000, until_pattern: "bound \\d+" }, process.cwd(), process.env),
    );
    const port = /bound (\d+)/.exec(report.output.text)?.[1];
    assert.ok(port, report.output.text);
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    const jobs = [{ jobId: job.id, leader: job.pid!, groups: job.groups() }];
    let now = 0;
    const ports = new ListeningPorts("none:", "linux", () => now);
    for (now = 0; now <= 5_000; now += 500) assert.deepEqual(ports.scan(jobs)?.get(job.id), [], `at ${now} ms`);
    await runtime.interact({
      jobId: job.id,
      window: { ms: 5_000 },
      input: { kind: "bytes", bytes: Buffer.from("\n") },
      until: { pattern: compileUntilPattern("listening") },
    });
    now = 6_500;
    assert.deepEqual(ports.scan(jobs)?.get(job.id), [], "not due yet: looked at 3 s ago");
    now = 7_000;
    assert.deepEqual(ports.scan(jobs)?.get(job.id), [`127.0.0.1:${port}`], "its next look sees it listen");
    await runtime.kill(job.id, "SIGKILL");
  });

  it("a scan of one job keeps what it knew of another's sockets: no read of the tables for them afterwards", async () => {
    const started = async () => {
      const report = await runtime.exec(
        prepareExec({ cmd: SERVER, yield_time_ms: 10_000, until_pattern: "port \\d+" }, process.cwd(), process.env),
      );
      const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
      return { jobId: job.id, leader: job.pid!, groups: job.groups() };
    };
    const [a, b] = [await started(), await started()];
    let now = 0;
    const ports = new ListeningPorts("none:", "linux", () => now);
    const running = new Set([a.jobId, b.jobId]);
    const reads = (scan: () => void) => {
      const before = socketTableReads();
      scan();
      return socketTableReads() - before;
    };
    ports.scan([a, b], undefined, running);
    now += 1_000;
    ports.scan([a, b], undefined, running); // the second look at the connections: the next is 2 s later
    now += 500;
    assert.equal(
      reads(() => ports.scan([a], undefined, running)),
      0,
      "one job's scan",
    );
    const both = new Map<number, string[]>();
    assert.equal(
      reads(() => {
        for (const [jobId, addresses] of ports.scan([a, b], undefined, running) ?? []) both.set(jobId, addresses);
      }),
      0,
      "the other's sockets are still known",
    );
    assert.equal(both.get(b.jobId)?.length, 1, "the other job's listener");
    await runtime.kill(a.jobId, "SIGKILL");
    await runtime.kill(b.jobId, "SIGKILL");
  });

  it("a process whose descriptors stay the same is read after 2, 4, then every 8 s; at once when their number changes", async () => {
    // A shell holding one file open, then a second one when told (a line on stdin).
    const report = await runtime.exec(
      prepareExec({ cmd: "exec 3</dev/null; read go; exec 4</dev/null; sleep 300", yield_time_ms: 250 }, process.cwd(), process.env),
    );
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    const jobs = [{ jobId: job.id, leader: job.pid!, groups: job.groups() }];
    let now = 0;
    const ports = new ListeningPorts("none:", "linux", () => now);
    const fdDir = `/proc/${job.pid}/fd`;
    const linkReads = () => fsCalls("readdirSync", [fdDir], () => ports.scan(jobs))[0];
    const readAt: number[] = [];
    for (now = 0; now <= 30_000; now += 500) if (linkReads() > 0) readAt.push(now);
    assert.deepEqual(readAt, [0, 2_000, 6_000, 14_000, 22_000, 30_000]);
    const before = readdirSync(fdDir).length;
    await job.send({ kind: "bytes", bytes: Buffer.from("\n") }, performance.now() + 1_000);
    await waitFor(() => readdirSync(fdDir).length > before, "the shell's second file");
    now += 500;
    assert.equal(linkReads(), 1, "a new descriptor: read at once");
    await runtime.kill(job.id, "SIGKILL");
  });

  it("a process that did not run, in a job that did not move, is not asked its number of descriptors while they are trusted", async () => {
    // The shell waits on a line (it does not run while it waits); its subshell wakes every 50 ms.
    const report = await runtime.exec(
      prepareExec({ cmd: "(while sleep 0.05; do :; done) & read go", yield_time_ms: 250 }, process.cwd(), process.env),
    );
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    const leader = job.pid!;
    const activity = (pid: number) => processTable()?.find((entry) => entry.pid === pid)?.activity;
    let subshell: number | undefined;
    await waitFor(() => {
      subshell = processTable()?.find((entry) => entry.ppid === leader)?.pid;
      return subshell !== undefined;
    }, "the subshell");
    let now = 0;
    const ports = new ListeningPorts("none:", "linux", () => now);
    const scan = (stamp: string) => ports.scan([{ jobId: job.id, leader, groups: job.groups(), stamp }]);
    const fdDirs = [`/proc/${leader}/fd`, `/proc/${subshell}/fd`];
    /** How many times the scan asked the shell's and the subshell's number of descriptors. */
    const asked = (stamp: string) => fsCalls("statSync", fdDirs, () => scan(stamp));
    scan("still");
    const subshellRan = activity(subshell!);
    await waitFor(() => activity(subshell!) !== subshellRan, "the subshell to run");
    now = 500;
    assert.deepEqual(asked("still"), [0, 1], "the waiting shell's descriptors stand; the subshell ran since: asked");
    now = 700;
    assert.deepEqual(asked("moved")[0], 1, "the job moved: asked");
    now = 2_000;
    assert.deepEqual(
      fsCalls("readdirSync", fdDirs, () => scan("moved")),
      [1, 1],
      "past the trust the descriptors are read again, moved or not",
    );
    await runtime.kill(job.id, "SIGKILL");
  });

  it("only the listening part of the tables is read: 2 000 connections add no listener and cost little", async () => {
    const crowd = await socketCrowd(1_000, 60);
    try {
      assert.equal(crowd.pairs, 1_000);
      const started = performance.now();
      const during = listeningSockets();
      const ms = performance.now() - started;
      assert.ok(during, "the tables are readable");
      // The helpers closed their listening sockets once connected: none of their 2 000 sockets is a listener.
      assert.ok(during.size < 500, `${during.size} listeners`);
      assert.ok(ms < 250, `read in ${ms.toFixed(1)} ms`);
    } finally {
      crowd.stop();
    }
  });
});
