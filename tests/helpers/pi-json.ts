/** One-shot runs of the real Pi CLI in `--mode json`: one prompt, its events, then Pi quits. */
import { type Run, runOf } from "./events.ts";
import type { PiHost } from "./hosts.ts";
import { type LaunchOptions, launchPi, type PiDirs } from "./pi-process.ts";
import type { Script } from "./scripted-model.ts";

export interface JsonRun extends Run {
  exitCode: number | null;
  stderr: string;
  dirs: PiDirs;
}

/**
 * Runs `prompt` with `script` as the model and waits for Pi to exit. Pi's stdin is closed at once:
 * with a piped stdin left open, JSON mode waits to read it. The temp dir is removed unless `keepDirs`.
 */
export async function runJson(
  host: PiHost,
  prompt: string,
  script: Script,
  options: LaunchOptions & { timeoutMs?: number; keepDirs?: boolean } = {},
): Promise<JsonRun> {
  // The prompt goes before extra flags: Pi reads the token after an extension's boolean flag as its value.
  const pi = await launchPi(host, "json", { ...options, args: [prompt, ...(options.args ?? [])] });
  pi.model.script = script;
  pi.child.stdin.end();
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), timeoutMs);
  });
  const exit = await Promise.race([pi.exited, late]);
  clearTimeout(timer);
  // Stopped with everything it started; `fail` cleans up and throws.
  if (exit === "late") return pi.fail(`${host.name} did not finish within ${timeoutMs} ms; stopped it`);
  try {
    const { code } = exit;
    if (pi.model.errors.length > 0) throw pi.model.errors[0];
    return { ...runOf(pi.records), exitCode: code, stderr: pi.stderr(), dirs: pi.dirs };
  } finally {
    // The model server always stops (it would keep the test process alive); the dirs may stay.
    if (options.keepDirs) await pi.stopModel();
    else await pi.cleanup();
  }
}
