// `npm run test:fast`, the contributor's loop: the unit tests in the fast tier (PI_UNIFIED_EXEC_TEST_TIER=fast:
// repeated checks at their `rounds(full, fast)` count), two files at a time, leaving out the unit files
// below. (No unit test starts CPU burners: those runs live in tests/stress/.) Each of them runs real jobs for seconds (servers that bind late,
// prompts waited for, deadlines and drains, warm shells against direct spawns) or decodes megabytes, and
// together they were 270 of the tier's 321 s of tests; with them the tier took 4 min on a busy 2-core
// machine. `npm run test:unit` and `npm test` (CI) run every one of them. A name here that no longer
// exists fails the run, so the list cannot silently go stale.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const UNIT = "tests/unit";

/** Unit files left to `npm run test:unit` and `npm test`; the seconds their tests took in the fast tier, 5 December 2026. */
const SLOW_UNIT_FILES = {
  "core/warm-shell-equivalence.test.ts": 31,
  "core/runtime.until.test.ts": 22,
  "core/input-wait.test.ts": 21,
  "core/pattern-cost.test.ts": 20,
  "core/runtime.stops.test.ts": 17,
  "core/runtime.input-wake.test.ts": 17,
  "core/shown-part.test.ts": 15,
  "core/user-typing.test.ts": 15,
  "core/runtime.speak-up.test.ts": 11,
  "core/output-decoder.hostile.test.ts": 10,
  "core/runtime.listening.test.ts": 10,
  "core/pty.test.ts": 9,
  "core/job-screen.test.ts": 8,
  "core/person-news.test.ts": 8,
  "core/completion-ledger.test.ts": 8,
  "core/progress.test.ts": 7,
  "core/job-background.test.ts": 7,
  "core/output-decoder.fuzz.test.ts": 7,
  "core/transport-contract.test.ts": 7,
  "pi/session-runtimes.test.ts": 7,
  "core/runtime.test.ts": 7,
  "core/warm-shells.test.ts": 6,
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
  ...files,
];
const run = spawnSync(process.execPath, args, {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, PI_UNIFIED_EXEC_TEST_TIER: "fast" },
});
process.exit(run.status ?? 1);
