/**
 * A listing reuses what the one scan cache read of a running job (listening addresses, and the input
 * wait read beside them) only while nothing of the job moved: each thing that changes its stamp
 * (output, input, the shell's exit, the input-wait quiet time) and the reuse bound are seen by the
 * next listing. Then through the runtime: a second listing in a row reads neither the process table
 * nor any job's processes, and what a job did since (a write that ended its read, a server's printed
 * bind) shows on the next listing.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { probeInputWait, readStdinIdentity } from "../../../src/core/input-wait/input-wait.ts";
import { type ProcReader, realProcReader } from "../../../src/core/input-wait/proc-wait.ts";
import type { Job } from "../../../src/core/job/job.ts";
import { stampOf } from "../../../src/core/job/job-reports.ts";
import { LISTING_SCAN, ListeningPorts } from "../../../src/core/processes/listening.ts";
import { oneTableFor, processTableReads } from "../../../src/core/processes/process-table.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { INPUT_WAIT_QUIET_MS } from "../../../src/core/shared/constants.ts";
import { waitFor } from "../../helpers/processes.ts";

const SKIP = process.platform !== "linux" && "reads /proc (Linux)";
const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 250, ...extra }, process.cwd(), process.env);

describe("what a listing reuses of a job, and what makes it stale", { skip: SKIP }, () => {
  const runtime = new ExecRuntime();
  after(() => runtime.shutdown());
  /** A job past the input-wait quiet time, so only what a test does to it moves it. */
  const started = async (cmd: string, settle = true): Promise<Job> => {
    const report = await runtime.exec(exec(cmd));
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    if (settle) await waitFor(() => job.quietMs() >= INPUT_WAIT_QUIET_MS + 50, "a quiet job");
    return job;
  };
  /** A scan cache on a hand-moved clock, and a listing's scan of `jobs` at `now`. */
  const cache = () => {
    const clock = { now: 0 };
    const ports = new ListeningPorts("none:", "linux", () => clock.now);
    const scan = (jobs: readonly Job[], at = clock.now) => {
      clock.now = at;
      const listed = jobs.map((job) => ({
        jobId: job.id,
        leader: job.pid!,
        stamp: stampOf(job),
        get groups() {
          return job.groups();
        },
      }));
      return oneTableFor(() => ports.scan(listed, LISTING_SCAN));
    };
    return { ports, scan };
  };

  it("a job nothing happened to is read once; a second look reuses its facts", async () => {
    const job = await started("sleep 300");
    const { scan } = cache();
    const first = scan([job], 0);
    const reads = processTableReads();
    const second = scan([job], 10);
    assert.equal(processTableReads(), reads, "no read of the process table");
    assert.equal(second?.get(job.id), first?.get(job.id));
  });

  it("output of one job makes only its facts stale, seen by the next look", async () => {
    const quiet = await started("sleep 300");
    const talker = await started('read line; echo "got $line"; sleep 300');
    const { ports, scan } = cache();
    scan([quiet, talker], 0);
    await runtime.interact(prepareWrite({ session_id: talker.id, chars: "x\n", yield_time_ms: 250 }, process.env));
    await waitFor(() => talker.outputBytesTotal > 0, "the job's output");
    scan([quiet, talker], 10);
    assert.deepEqual([ports.readAt(quiet.id), ports.readAt(talker.id)], [0, 10]);
  });

  it("input sent to a job (no output) makes its facts stale", async () => {
    const reader = await started("read line; sleep 300");
    const before = stampOf(reader);
    await runtime.interact(prepareWrite({ session_id: reader.id, chars: "x\n", yield_time_ms: 100 }, process.env));
    assert.equal(reader.outputBytesTotal, 0, "the job printed nothing");
    assert.notEqual(stampOf(reader), before);
  });

  it("the shell's exit while what it started runs on makes the facts stale", async () => {
    const job = await started("sleep 300 & read line; exit 0");
    const before = stampOf(job);
    job.send({ kind: "eof" }, performance.now() + 1_000);
    await waitFor(() => job.leaderExited, "the shell's exit");
    assert.notEqual(stampOf(job), before);
  });

  it("crossing the input-wait quiet time makes the facts stale (a prompt counts only after it)", async () => {
    const job = await started("printf 'name? '; sleep 300", false);
    await waitFor(() => job.outputBytesTotal > 0, "the prompt");
    // Looks at given moments: 10 ms after the prompt, then just past the quiet time.
    const now = performance.now();
    const printed = now - job.quietMs(now);
    assert.equal(stampOf(job, printed + 10), stampOf(job, printed + 20));
    assert.notEqual(stampOf(job, printed + INPUT_WAIT_QUIET_MS + 10), stampOf(job, printed + 20));
  });

  it("facts older than the reuse bound are read again", async () => {
    const job = await started("sleep 300");
    const { ports, scan } = cache();
    scan([job], 0);
    scan([job], LISTING_SCAN.reuseMs - 1);
    assert.equal(ports.readAt(job.id), 0);
    scan([job], LISTING_SCAN.reuseMs + 1);
    assert.equal(ports.readAt(job.id), LISTING_SCAN.reuseMs + 1);
  });

  it("facts read without the input wait (the picker's) are read again for a listing that shows it", async () => {
    const own = new ExecRuntime();
    try {
      const report = await own.exec(exec("sleep 300"));
      const job = own.jobs().find((candidate) => candidate.id === report.job.jobId)!;
      await waitFor(() => job.quietMs() >= INPUT_WAIT_QUIET_MS + 50, "a quiet job");
      own.liveJobs({ ports: true });
      let reads = processTableReads();
      own.liveJobs({ ports: true });
      assert.equal(processTableReads(), reads, "the picker's second look reuses the first");
      const listed = own.list().find((entry) => entry.jobId === job.id);
      assert.equal(processTableReads(), reads + 1, "the input wait is read for the listing");
      assert.equal(listed?.inputWait, undefined, "a sleep waits for no input");
      reads = processTableReads();
      own.list();
      assert.equal(processTableReads(), reads, "and reused with the scan afterwards");
    } finally {
      await own.shutdown();
    }
  });
});

describe("listings through the runtime", { skip: SKIP }, () => {
  const runtime = new ExecRuntime();
  after(() => runtime.shutdown());

  it("a second listing in a row reads neither the process table nor any job's processes, and says the same", async () => {
    for (let i = 0; i < 8; i++) await runtime.exec(exec("sleep 300 & sleep 300 & wait"));
    const server =
      "python3 -c \"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print('port', s.getsockname()[1], flush=True); time.sleep(300)\"";
    const report = await runtime.exec(exec(server, { yield_time_ms: 10_000, until_pattern: "port \\d+" }));
    const port = /port (\d+)/.exec(report.output.text)?.[1];
    // Every job past the input-wait quiet time: nothing can move any of them between the two listings.
    await waitFor(() => runtime.jobs().every((job) => job.quietMs() >= INPUT_WAIT_QUIET_MS + 50), "quiet jobs");
    const first = runtime.list();
    const reads = processTableReads();
    const second = runtime.list();
    assert.equal(processTableReads(), reads, "no read of the process table");
    const facts = (listing: typeof first) => listing.map(({ jobId, listening, inputWait }) => ({ jobId, listening, inputWait }));
    assert.deepEqual(facts(second), facts(first));
    assert.deepEqual(second.find((job) => job.jobId === report.job.jobId)?.listening, [`127.0.0.1:${port}`]);
    for (const job of runtime.jobs()) await runtime.kill(job.id, "SIGKILL");
  });

  it("a write that ends a job's read of stdin shows on the next listing: it no longer waits for input", async () => {
    const report = await runtime.exec(exec("read line; sleep 300"));
    const id = report.job.jobId;
    await waitFor(() => runtime.list().find((job) => job.jobId === id)?.inputWait?.likely === true, "the read of stdin", 10_000, 50);
    await runtime.interact(prepareWrite({ session_id: id, chars: "x\n", yield_time_ms: 300 }, process.env));
    // The shell runs `sleep` once it read the line; the listing right after the write reads the job again.
    await waitFor(
      () => {
        const listed = runtime.list().find((job) => job.jobId === id);
        return listed !== undefined && !listed.inputWait;
      },
      "no input wait",
      10_000,
      50,
    );
    await runtime.kill(id, "SIGKILL");
  });

  it("a server's bind it printed shows on the listing right after the line, however soon", async () => {
    const report = await runtime.exec(
      exec(
        "read go; python3 -c \"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print('port', s.getsockname()[1], flush=True); time.sleep(300)\"",
      ),
    );
    const id = report.job.jobId;
    const job = runtime.jobs().find((candidate) => candidate.id === id)!;
    assert.deepEqual(runtime.list().find((listed) => listed.jobId === id)?.listening, []);
    await job.send({ kind: "bytes", bytes: Buffer.from("\n") }, performance.now() + 1_000);
    await waitFor(() => /port \d+\n/.test(job.previewText()), "the server's line");
    const port = /port (\d+)/.exec(job.previewText())?.[1];
    assert.deepEqual(runtime.list().find((listed) => listed.jobId === id)?.listening, [`127.0.0.1:${port}`]);
    await runtime.kill(id, "SIGKILL");
  });

  it("a listing's input-wait probe reads the system calls of only the processes that hold the job's stdin, and still finds the read", async () => {
    // The shell reads stdin; its eight `sleep`s got /dev/null as stdin (a non-interactive shell's `&`).
    const report = await runtime.exec(exec("for i in 1 2 3 4 5 6 7 8; do sleep 300 & done; read line"));
    const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId)!;
    await waitFor(() => job.inputWait().likely, "the read of stdin", 10_000, 50);
    const stdin = readStdinIdentity(job.pid!);
    assert.ok(stdin);
    const ports = new ListeningPorts("none:");
    const probedPids = new Set<string>();
    const counting: ProcReader = {
      ...realProcReader,
      readFile(path) {
        if (path.endsWith("/syscall")) probedPids.add(path.split("/")[2]!);
        return realProcReader.readFile(path);
      },
    };
    const wait = oneTableFor(() => {
      ports.scan([{ jobId: job.id, leader: job.pid!, groups: job.groups() }]);
      const holders = (identity: string, tty: boolean) => ports.stdinHolders(job.id, identity, tty);
      return probeInputWait({ pid: job.pid!, stdin, tty: false, lastLine: "", quietMs: 0, holders }, counting);
    });
    assert.deepEqual(wait, { likely: true, reason: "syscall", pid: job.pid });
    assert.deepEqual([...probedPids], [String(job.pid)], "only the shell's system call was read");
    await runtime.kill(job.id, "SIGKILL");
  });
});
