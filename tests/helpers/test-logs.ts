/**
 * Loaded into every test process by `npm test` (`--import`). Job logs of runtimes that tests make
 * in-process go into one temp directory of the run, removed when the runner exits (not the system's
 * temp dir, which a run used to fill with some 160 log directories). And each test file has a
 * ceiling: `node --test` has none, and a file whose host never answered once sat for good.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { LOG_DIR_ENV } from "../../src/core/shared/constants.ts";
import { stopEverythingLaunched } from "./launched.ts";

/**
 * Seconds a test file may run, unless `PI_UNIFIED_EXEC_TEST_CEILING_S` says otherwise: a stress file
 * repeats its runs beside CPU burners and a real-tools file may first install its tools, so both get more.
 */
const file = process.argv[1] ?? "this test file";
const CEILING_S = Number(process.env.PI_UNIFIED_EXEC_TEST_CEILING_S) || (/[\\/]tests[\\/](stress|real)[\\/]/.test(file) ? 600 : 240);

if (!process.env[LOG_DIR_ENV]) {
  const dir = mkdtempSync(join(tmpdir(), "piue-test-logs-"));
  process.env[LOG_DIR_ENV] = dir;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
}

// The runner starts each file in a process of its own with NODE_TEST_CONTEXT set; the runner itself
// has no ceiling. Unref'd: a file that ends normally is never held up by it.
if (process.env.NODE_TEST_CONTEXT) {
  setTimeout(() => {
    process.stderr.write(
      `${relative(process.cwd(), file)} did not finish within its ${CEILING_S} s ceiling (PI_UNIFIED_EXEC_TEST_CEILING_S): ` +
        "everything it launched was stopped and the file fails.\n",
    );
    stopEverythingLaunched();
    process.exit(1);
  }, CEILING_S * 1_000).unref();
}
