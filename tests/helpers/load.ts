import { type ChildProcess, spawn } from "node:child_process";

/**
 * CPU burners: busy loops beside a test, so exits, drains and waits are also tried on a machine with
 * no idle core (the worst losses only show there). Each leads its own process group, so the returned
 * stop function kills it whole. Only the files under `tests/stress/` (`npm run test:stress`) start
 * them, with "burners" in the test's name: `npm test` and `npm run test:fast` never do.
 */
export function startBurners(count = 2): () => void {
  // One that slipped into `npm test` would make it slow and its timings flaky: it fails there instead.
  if (!/[\\/]tests[\\/]stress[\\/]/.test(process.argv[1] ?? "")) {
    throw new Error("CPU burners are for tests/stress/ (npm run test:stress) only; npm test runs each check once, without them.");
  }
  const burners: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    burners.push(spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore", detached: true }));
  }
  return () => {
    for (const burner of burners) {
      try {
        if (burner.pid) process.kill(-burner.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
}

/**
 * How many rounds a repeated check runs: all of them in `npm test`, fewer in the fast tier, where a
 * contributor wants an answer in two minutes and CI still runs every round.
 */
export function rounds(full: number, fast: number): number {
  return process.env.PI_UNIFIED_EXEC_TEST_TIER === "fast" ? fast : full;
}
