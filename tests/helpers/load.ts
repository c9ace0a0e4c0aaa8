import { type ChildProcess, spawn } from "node:child_process";

/**
 * CPU burners: busy loops beside a test, so exits, drains and waits are also tried on a machine with
 * no idle core (the worst losses only show there). Each leads its own process group, so the returned
 * stop function kills it whole. Every test that runs beside burners uses these.
 */
export function startBurners(count = 2): () => void {
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
