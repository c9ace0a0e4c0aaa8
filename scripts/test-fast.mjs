// `npm run test:fast`, the contributor's loop: the unit tests in the fast tier (PI_UNIFIED_EXEC_TEST_TIER=fast:
// repeated checks at their `rounds(full, fast)` count), two files at a time, leaving out the unit files
// below: each runs real jobs for seconds (servers that bind late, prompts waited for, deadlines and
// drains, warm shells against direct spawns, listings of real processes) or decodes megabytes. No unit
// test starts CPU burners (those runs are tests/stress/, `npm run test:stress`). `npm run test:unit`
// and `npm test` (CI) run every one of these files. A name here that no longer exists fails the run,
// so the list cannot silently go stale; a unit file that grows past 5 s joins it.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const UNIT = "tests/unit";

/**
 * Unit files left to `npm run test:unit` and `npm test`; the seconds each took in the fast tier, 6 December
 * 2026 (the decoder's three files sit near 5 s: 3-7 s by the machine's load).
 */
const SLOW_UNIT_FILES = {
  "core/runtime.input-wake.test.ts": 22,
  "core/runtime.until.test.ts": 21,
  "core/runtime.ports.test.ts": 21,
  "core/runtime.stops.test.ts": 16,
  "core/job-background.test.ts": 14,
  "core/input-wait.test.ts": 14,
  "core/listing-reuse.test.ts": 13,
  "core/runtime.test.ts": 13,
  "core/user-typing.test.ts": 12,
  "core/runtime.listening.test.ts": 12,
  "core/job-screen.test.ts": 11,
  "core/warm-shell-equivalence.test.ts": 11,
  "core/person-news.test.ts": 9,
  "core/pattern-cost.test.ts": 9,
  "core/pty-session-wrapper.test.ts": 10,
  "core/runtime.speak-up.test.ts": 8,
  "core/pty.test.ts": 8,
  "core/progress.test.ts": 7,
  "core/output-decoder.ends.test.ts": 7,
  "core/output-decoder.hostile.test.ts": 7,
  "core/watchdog.test.ts": 7,
  "core/warm-shells.test.ts": 6,
  "core/output-decoder.fuzz.test.ts": 6,
  "pi/session-runtimes.test.ts": 6,
  "core/completion-ledger.test.ts": 5,
};

const missing = Object.keys(SLOW_UNIT_FILES).filter((file) => !existsSync(join(ROOT, UNIT, file)));
if (missing.length > 0) {
  console.error(`scripts/test-fast.mjs names unit files that do not exist: ${missing.join(", ")}`);
  process.exit(1);
}

const files = readdirSync(join(ROOT, UNIT), { recursive: true, encoding: "utf8" })
  .map((file) => file.split("\\").join("/"))
  .filter((file) => file.endsWith(".test.ts") && !(file in SLOW_UNIT_FILES))
  .sort()
  .map((file) => `${UNIT}/${file}`);

const args = [
  "--import",
  "tsx",
  "--import",
  "./tests/helpers/test-logs.ts",
  "--test",
  "--test-concurrency=2",
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=./tests/helpers/slowest-files.mjs",
  "--test-reporter-destination=stdout",
  ...files,
];
const run = spawnSync(process.execPath, args, {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, PI_UNIFIED_EXEC_TEST_TIER: "fast" },
});
process.exit(run.status ?? 1);
