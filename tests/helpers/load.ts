import { type ChildProcess, spawn } from "node:child_process";

/**
 * CPU burners: busy loops beside a test, so exits, drains and waits are also tried on a machine with
 * no idle core (the worst losses only show there). Each leads its own process group, so the returned
 * stop function kills it whole. Every test that runs beside burners uses these, and says "burners" in
 * its name or its suite's: `npm run test:fast` skips those.
 */
export function startBurners(count = 2): () => void {
  // The fast tier leaves out every test named with "burners" (`npm run test:fast`); one that starts
  // them without saying so would make that tier slow and flaky, so it fails there instead.
  if (process.env.PI_UNIFIED_EXEC_TEST_TIER === "fast") {
    throw new Error('A test that starts CPU burners must say "burners" in its name (or its suite\'s), so the fast tier leaves it out.');
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
