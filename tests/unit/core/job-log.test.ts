import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import {
  JobLog,
  LOG_TAIL_BUDGET_BYTES,
  LOG_TAIL_BYTES,
  LogBudget,
  LogDirectory,
  logConfig,
  NO_LOG_PATH,
  openLogFile,
} from "../../../src/core/log/job-log.ts";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { RUNTIME_LOG_QUOTA_ENV } from "../../../src/core/shared/constants.ts";
import { StartedJobs, statusOf, untilExit } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";

const scratch = () => mkdtempSync(join(tmpdir(), "piue-log-test-"));
const noop = { drain: () => {}, quotaReached: () => {} };
const logsUnder = (parent: string) => new LogDirectory({ ...logConfig({}), parent });
const started = new StartedJobs();
const start = (command: string, logs: LogDirectory) => started.start(command, { logs });
const request = (cmd: string, yieldMs: number) => prepareExec({ cmd, yield_time_ms: yieldMs }, process.cwd(), process.env);

describe("job logs", () => {
  it("creates nothing until the first log, then a private directory and 0600 files", async () => {
    const parent = scratch();
    const logs = logsUnder(parent);
    assert.deepEqual(readdirSync(parent), [], "constructing the directory object writes nothing");
    const log = logs.open(7, noop);
    assert.match(log.path, /\/pi-unified-exec-[^/]+\/7\.log$/, "short: the private directory's random name makes it unguessable");
    assert.equal(statSync(logs.path()).mode & 0o777, 0o700);
    log.write(Buffer.from("hello\n"));
    await log.flushed();
    assert.equal(statSync(log.path).mode & 0o777, 0o600);
    assert.equal(readFileSync(log.path, "utf8"), "hello\n");
    log.close();
  });

  it("says when nothing is on its way to disk (no wait at a job's exit), and waits for bytes that are, or for the hung-disk bound", async () => {
    const log = logsUnder(scratch()).open(8, noop);
    assert.equal(log.flushedWithin(5_000), undefined, "nothing written yet");
    log.write(Buffer.from("line\n"));
    const flushing = log.flushedWithin(5_000);
    assert.ok(flushing, "a write is on its way");
    await flushing;
    assert.equal(readFileSync(log.path, "utf8"), "line\n");
    assert.equal(log.flushedWithin(5_000), undefined, "written");
    // A disk that never answers: the bound ends the wait, the bytes stay queued.
    const hung = new Writable({ write: () => {} });
    const stuck = new JobLog(join(scratch(), "hung.log"), hung, noop, 1024, new LogBudget(1024));
    stuck.write(Buffer.from("never written"));
    const started = performance.now();
    await stuck.flushedWithin(50);
    assert.ok(performance.now() - started >= 45, "waited for the bound");
    log.close();
  });

  it("creates the file at once, in the caller's turn (no thread-pool round trip on a call's path), private and empty", async () => {
    const path = join(scratch(), "at-once.log");
    const stream = openLogFile(path);
    assert.equal(existsSync(path), true, "created before the call returns");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, "utf8"), "");
    await new Promise<void>((resolve) => stream.end(resolve));
    assert.equal(readFileSync(path, "utf8"), "");
  });

  it("never opens an existing file (exclusive create): the log is partial, with the reason", async () => {
    const path = join(scratch(), "taken.log");
    writeFileSync(path, "someone else's\n");
    const log = new JobLog(path, openLogFile(path), noop, 1024, new LogBudget(1024));
    log.write(Buffer.from("mine"));
    await waitFor(() => log.partialReason !== undefined, "the open to fail");
    assert.match(log.partialReason!, /log write failed: .*EEXIST/);
    assert.equal(readFileSync(path, "utf8"), "someone else's\n", "the existing file is untouched");
    await log.flushed();
  });

  it("when the directory cannot be created, the log says why and accepts writes without failing", async () => {
    const file = join(scratch(), "a-file");
    writeFileSync(file, "");
    const log = logsUnder(file).open(1, noop);
    assert.equal(log.path, NO_LOG_PATH);
    assert.match(log.partialReason ?? "", /log directory could not be created: .*ENOTDIR/);
    assert.equal(log.write(Buffer.from("x")), true);
    await log.flushed();
    assert.equal(existsSync(join(file, "x")), false);
  });
});

describe("the exit tail budget", () => {
  const logIn = (dir: string, budget: LogBudget) => (name: string) => {
    const path = join(dir, name);
    return new JobLog(path, openLogFile(path), noop, 1_000_000, budget);
  };
  const finish = async (log: JobLog) => {
    log.appendTail();
    await log.flushed();
    log.close();
  };

  it("tails share it: a tail it cuts keeps its end, and past it a log holds only its marker, which says so", async () => {
    const dir = scratch();
    const budget = new LogBudget(0, 1_000);
    const open = logIn(dir, budget);
    const whole = open("whole.log");
    whole.write(Buffer.from("a".repeat(600)));
    await finish(whole);
    assert.equal(budget.tailRemaining, 400);
    const cut = open("cut.log");
    cut.write(Buffer.from(`${"b".repeat(1_000)}END`));
    await finish(cut);
    assert.equal(budget.tailRemaining, 0);
    const refused = open("refused.log");
    refused.write(Buffer.from("c".repeat(100)));
    await finish(refused);
    await waitFor(() => statSync(refused.path).size > 0, "the marker on disk");

    const read = (log: JobLog) => readFileSync(log.path, "utf8");
    assert.match(read(whole), /the last 600 of them follow\.\]\na{600}$/);
    assert.match(
      read(cut),
      /1003 bytes were not logged; the last 400 of them follow \(this Pi session's budget for exit tails ran out\)\.\]\nb{397}END$/,
    );
    assert.match(
      read(refused),
      /^\n\[pi-unified-exec: log quota reached: the Pi session's logs are full\. Later output is not logged, and none of it will be appended at exit: this Pi session's budget for exit tails is used up\.\]\n$/,
    );
    assert.doesNotMatch(read(refused), /cc/, "none of the output");
  });

  it("a tail promised at the quota but used up by others before the exit is replaced by a line saying so", async () => {
    const dir = scratch();
    const budget = new LogBudget(0, 100);
    const open = logIn(dir, budget);
    const late = open("late.log");
    late.write(Buffer.from("x".repeat(50)));
    const greedy = open("greedy.log");
    greedy.write(Buffer.from("y".repeat(500)));
    await finish(greedy);
    await finish(late);
    const text = readFileSync(late.path, "utf8");
    assert.match(
      text,
      /its last 524288 bytes are appended when the job exits, as far as this Pi session's budget for exit tails lasts\.\]\n/,
    );
    assert.match(
      text,
      /\[pi-unified-exec: 50 bytes were not logged; none of them follow: this Pi session's budget for exit tails is used up\.\]\n$/,
    );
    assert.doesNotMatch(text, /xx/, "none of the output");
  });
});

describe("log quotas", () => {
  const config = (over: Partial<ReturnType<typeof logConfig>>) => ({ ...logConfig({}), parent: logConfig().parent, ...over });

  it("at the job quota the log gets a marker, keeps running, and gets the tail at exit", async () => {
    const logs = new LogDirectory(config({ jobQuotaBytes: 100_000 }));
    const job = start("head -c 20000000 /dev/zero | tr '\\0' x; echo; echo the-very-end", logs);
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
    assert.match(job.logPartialReason ?? "", /log quota reached: 100000 bytes per job/);
    const log = readFileSync(job.logPath, "latin1");
    assert.ok(statSync(job.logPath).size <= 100_000 + LOG_TAIL_BYTES + 1_000, `log is ${statSync(job.logPath).size} bytes`);
    assert.ok(log.startsWith("x".repeat(1000)));
    assert.match(log, /\[pi-unified-exec: log quota reached: 100000 bytes per job\. Later output is not logged/);
    assert.match(log, /\[pi-unified-exec: \d+ bytes were not logged; the last 524288 of them follow\.\]\n/);
    assert.ok(log.endsWith("x\nthe-very-end\n"), "the tail keeps the end of the stream");
  });

  it("the runtime quota is shared by all jobs", async () => {
    const logs = new LogDirectory(config({ runtimeQuotaBytes: 150_000 }));
    const first = start("head -c 100000 /dev/zero", logs);
    await untilExit(first);
    assert.equal(first.logPartialReason, undefined);
    const second = start("head -c 100000 /dev/zero", logs);
    await untilExit(second);
    assert.match(second.logPartialReason ?? "", /the Pi session's logs are full/);
  });

  it("the runtime's log directory never holds more than its quota, the exit-tail budget and marker lines, however many jobs run after the quota", async (t) => {
    const quota = 200_000;
    const parent = mkdtempSync(join(tmpdir(), "piue-disk-bound-"));
    t.after(() => rmSync(parent, { recursive: true, force: true }));
    const logs = new LogDirectory({ ...logConfig({ [RUNTIME_LOG_QUOTA_ENV]: String(quota) }), parent });
    const runtime = new ExecRuntime({ logs });
    // 40 jobs of 1 MB each: without the tail budget their tails alone would add 40 × 512 KiB = 20 MiB.
    const jobs = 40;
    for (let i = 0; i < jobs; i++) {
      const report = await runtime.exec(request(`head -c 1000000 /dev/zero | tr '\\0' x; echo; echo end-${i}`, 10_000));
      assert.equal(report.job.exit?.exitCode, 0, report.output.text.slice(-200));
    }
    await runtime.shutdown();
    const dir = logs.path();
    // The job logs (the watchdog keeps its registry beside them; the quota is about what jobs print).
    const files = readdirSync(dir)
      .filter((name) => /^\d+\.log$/.test(name))
      .map((name) => join(dir, name));
    assert.equal(files.length, jobs);
    const sizes = files.map((file) => statSync(file).size);
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const markers = jobs * 400;
    assert.ok(total <= quota + LOG_TAIL_BUDGET_BYTES + markers, `the directory holds ${total} bytes`);
    assert.ok(total >= quota + LOG_TAIL_BUDGET_BYTES - LOG_TAIL_BYTES, `the budget is used, not wasted (${total} bytes)`);
    const onlyMarker = sizes.filter((size) => size < 400).length;
    assert.ok(onlyMarker >= 5, `the last jobs' logs hold only their marker (${onlyMarker} do)`);
    const last = readFileSync(files.find((file) => file.endsWith("/40.log"))!, "utf8");
    assert.match(
      last,
      /^\n\[pi-unified-exec: log quota reached: the Pi session's logs are full\. Later output is not logged, and none of it will be appended at exit: this Pi session's budget for exit tails is used up\.\]\n$/,
    );
  });

  it("PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop stops the job instead", async () => {
    const logs = new LogDirectory(config({ jobQuotaBytes: 50_000, onQuota: "stop" }));
    const job = start("yes flood", logs);
    await untilExit(job);
    assert.equal(job.exit?.stoppedBy, "log_quota");
    assert.equal(job.exit?.signal, "SIGTERM");
  });

  it("a storage failure mid-run keeps the job running and is reported; nothing crashes", async () => {
    let written = 0;
    const failingDisk = new LogDirectory(config({}), () => {
      const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          written += chunk.length;
          callback(written > 10_000 ? Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }) : null);
        },
      });
      return stream;
    });
    const job = start("for i in $(seq 1 2000); do echo line $i; done; read -t 0.3 x; echo still-alive", failingDisk);
    await waitFor(() => job.logPartialReason !== undefined, "the disk to fail");
    assert.equal(statusOf(job), "running");
    assert.match(job.logPartialReason!, /log write failed: ENOSPC/);
    await untilExit(job);
    assert.equal(job.exit?.exitCode, 0);
    assert.match(job.takeOutput().text, /still-alive\n$/);
  });
});
