/**
 * Starts the real Pi CLI offline for a test: pi-ai's faux provider driven by a {@link ScriptedModel},
 * isolated HOME, agent dir and cwd in a fresh temp dir (never the user's ~/.pi), PI_OFFLINE=1, and only
 * the extensions the test names (`-ne` turns every other one off).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PiEvent } from "./events.ts";
import { EXTENSION_ENTRY, type PiHost, REPO_ROOT } from "./hosts.ts";
import { killTree, registerLaunched } from "./launched.ts";
import { ScriptedModel } from "./scripted-model.ts";

export const FAUX_EXTENSION = join(REPO_ROOT, "tests", "helpers", "faux-extension.ts");

export interface LaunchOptions {
  /** Extensions to load besides the faux model (default: this checkout). */
  extensions?: readonly string[];
  /**
   * Pass `-ne` (default true): only the named extensions load. False loads what the agent dir has
   * installed too, as a user's Pi does (the packed-artifact test).
   */
  noExtensions?: boolean;
  /** More CLI arguments (flags, or the prompt in JSON mode). */
  args?: readonly string[];
  env?: Record<string, string>;
  /** Prepares the temp dirs before Pi starts (settings.json, files, tools); may return more environment. */
  setup?: (dirs: PiDirs) => Record<string, string> | undefined;
  /** A command Pi runs under (its arguments first, then Pi's command line), e.g. `["python3", SUBREAPER]`. */
  wrapper?: readonly string[];
}

export interface PiDirs {
  root: string;
  home: string;
  agentDir: string;
  cwd: string;
  /** Where the extension's runtime makes its private log directory: removed with the rest at cleanup. */
  logs: string;
}

export interface LaunchedPi {
  child: ChildProcessWithoutNullStreams;
  model: ScriptedModel;
  dirs: PiDirs;
  /** Every JSON record Pi printed on stdout, in order. */
  records: PiEvent[];
  /** Called for each record as it arrives. */
  onRecord: Set<(record: PiEvent) => void>;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Removes the temp dir and stops the model server (after the process exited). */
  cleanup: () => Promise<void>;
  /**
   * For a Pi that failed: SIGKILLs it and everything it started, waits for its exit, then cleans
   * up. `why` becomes the error thrown, with Pi's stderr.
   */
  fail: (why: string) => Promise<never>;
  /** Stops the model server only, keeping the temp dir for the test to inspect. */
  stopModel: () => Promise<void>;
}

export function makeDirs(): PiDirs {
  const root = mkdtempSync(join(tmpdir(), "piue-test-"));
  const dirs = { root, home: join(root, "home"), agentDir: join(root, "agent"), cwd: join(root, "cwd"), logs: join(root, "logs") };
  for (const dir of [dirs.home, dirs.agentDir, dirs.cwd, dirs.logs]) mkdirSync(dir, { recursive: true });
  return dirs;
}

/**
 * The environment that isolates a test's Pi: its own HOME, agent dir and job logs (a test's logs go
 * with its temp dir, not into the system's: a run of the suite used to leave some 200 of them), offline,
 * the scripted model, and no turn budget (a file of wake tests starts more turns than a person would
 * allow; tests/e2e/attention.test.ts sets one).
 */
export function isolatedPiEnvironment(dirs: PiDirs, modelUrl: string): Record<string, string> {
  return {
    HOME: dirs.home,
    PI_CODING_AGENT_DIR: dirs.agentDir,
    PI_UNIFIED_EXEC_LOG_DIR: dirs.logs,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    PIUE_TEST_MODEL_URL: modelUrl,
    PI_UNIFIED_EXEC_WAKE_TURNS: "0",
  };
}

export async function launchPi(host: PiHost, mode: "rpc" | "json", options: LaunchOptions = {}): Promise<LaunchedPi> {
  const model = await ScriptedModel.start();
  const dirs = makeDirs();
  const setupEnv = options.setup?.(dirs) ?? {};
  const extensions = [FAUX_EXTENSION, ...(options.extensions ?? [EXTENSION_ENTRY])];
  const args = [
    host.cliPath,
    ...(options.noExtensions === false ? [] : ["-ne"]),
    "--no-session",
    ...extensions.flatMap((path) => ["-e", path]),
    "--provider",
    "faux",
    "--model",
    "faux-1",
    "--mode",
    mode,
    ...(options.args ?? []),
  ];
  const [command, ...commandArgs] = [...(options.wrapper ?? []), process.execPath, ...args];
  const child = spawn(command!, commandArgs, {
    cwd: dirs.cwd,
    env: { ...process.env, ...isolatedPiEnvironment(dirs, model.url), ...options.env, ...setupEnv },
    stdio: ["pipe", "pipe", "pipe"],
  });

  const records: PiEvent[] = [];
  const onRecord = new Set<(record: PiEvent) => void>();
  // The pieces of the line still open. Split on LF only: a generic line reader would also split on
  // U+2028/U+2029 inside JSON strings. Only each new chunk is searched, and a line is joined once: a
  // test that writes megabytes makes Pi print records of 14 MB, and growing one string per chunk and
  // searching it from the start took a minute of this process's CPU per such call.
  let open: string[] = [];
  const takeLine = (line: string) => {
    if (!line.trim()) return;
    let record: PiEvent;
    try {
      record = JSON.parse(line) as PiEvent;
    } catch {
      record = { type: "unparsed_stdout", line };
    }
    // When the client read it (the benchmark times tools at Pi's events as a client sees them); not enumerable, so records compare as before.
    Object.defineProperty(record, "receivedAt", { value: performance.now(), enumerable: false });
    records.push(record);
    for (const listener of onRecord) listener(record);
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      open.push(chunk.slice(start, newline));
      const line = open.length === 1 ? open[0]! : open.join("");
      open = [];
      start = newline + 1;
      takeLine(line.endsWith("\r") ? line.slice(0, -1) : line);
    }
    if (start < chunk.length) open.push(chunk.slice(start));
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  // A file that hits its ceiling stops this Pi and its jobs and removes its dirs (test-logs.ts).
  const unregister = registerLaunched(() => {
    if (child.pid) killTree(child.pid);
    rmSync(dirs.root, { recursive: true, force: true });
  });
  const cleanup = async () => {
    unregister();
    await model.close();
    // Not retried: a file created after Pi exited would mean something of ours outlived it.
    rmSync(dirs.root, { recursive: true, force: true });
  };

  return {
    child,
    model,
    dirs,
    records,
    onRecord,
    stderr: () => stderr,
    exited,
    cleanup,
    fail: async (why) => {
      if (child.pid) killTree(child.pid);
      await exited;
      await cleanup();
      throw new Error(`${why}\nstderr:\n${stderr}`);
    },
    stopModel: async () => {
      unregister();
      await model.close();
    },
  };
}
