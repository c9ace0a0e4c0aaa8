import { spawn } from "node:child_process";

/**
 * Busy processes beside a test (`yes > /dev/null`), so exits, drains and waits are also exercised on
 * a machine that is short of CPU. Returns the function that stops them.
 */
export function startCpuBurners(count = 2): () => void {
  const burners = Array.from({ length: count }, () => spawn("yes", [], { stdio: "ignore" }));
  return () => {
    for (const burner of burners) burner.kill("SIGKILL");
  };
}
