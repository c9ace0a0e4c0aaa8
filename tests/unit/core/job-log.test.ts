import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { JobLog, LogBudget, LogDirectory, NO_LOG_PATH, openLogFile } from "../../../src/core/job-log.ts";
import { logConfig } from "../../../src/core/log-settings.ts";
import { waitFor } from "../../helpers/processes.ts";

const scratch = () => mkdtempSync(join(tmpdir(), "piue-log-test-"));
const noop = { drain: () => {}, quotaReached: () => {} };
const logsUnder = (parent: string) => new LogDirectory({ ...logConfig({}), parent });

describe("job logs", () => {
  it("creates nothing until the first log, then a private directory and 0600 files", async () => {
    const parent = scratch();
    const logs = logsUnder(parent);
    assert.deepEqual(readdirSync(parent), [], "constructing the directory object writes nothing");
    const log = logs.open(7, noop);
    assert.match(log.path, /\/pi-unified-exec-[^/]+\/job-7-[0-9a-f]{8}\.log$/);
    assert.equal(statSync(logs.path()).mode & 0o777, 0o700);
    log.write(Buffer.from("hello\n"));
    await log.flushed();
    assert.equal(statSync(log.path).mode & 0o777, 0o600);
    assert.equal(readFileSync(log.path, "utf8"), "hello\n");
    log.close();
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
