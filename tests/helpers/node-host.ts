import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { REPO_ROOT } from "./hosts.ts";

/**
 * A separate Node process running `program` (an ES module; TypeScript through tsx, paths from the
 * checkout), standing in for a Pi process the test can signal or kill; its stderr goes to the test's,
 * its stdout is collected for `output()`.
 */
export function startNodeHost(program: string): { host: ChildProcessByStdio<null, Readable, null>; output: () => string } {
  const host = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  host.stdout.on("data", (chunk) => {
    out += chunk;
  });
  return { host, output: () => out };
}
