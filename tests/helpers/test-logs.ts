/**
 * Loaded into every test process by `npm test` (`--import`): the job logs of runtimes that tests make
 * in-process go into one temp directory of the run, removed when the test runner exits, instead of
 * the system's temp dir (a run of the suite left some 160 log directories, 143 MB, there; a user's
 * own logs are kept for days by design). The runner sets it first and every test file's process
 * inherits it. A test that names its own parent, and every Pi a test starts (`pi-process.ts` gives
 * each its own), are unaffected.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOG_DIR_ENV } from "../../src/core/shared/constants.ts";

if (!process.env[LOG_DIR_ENV]) {
  const dir = mkdtempSync(join(tmpdir(), "piue-test-logs-"));
  process.env[LOG_DIR_ENV] = dir;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
}
