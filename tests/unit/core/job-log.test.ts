import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { logConfig } from "../../../src/core/config.ts";
import { JobLog, LogBudget, LogDirectory, NO_LOG_PATH, openLogFile } from "../../../src/core/job-log.ts";
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
