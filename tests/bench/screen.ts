/**
 * The screen emulator's section of the benchmark (issue 17): parsing throughput of a 10 MB
 * redraw-heavy stream (htop-like 120×40 frames), the time of one 120×40 snapshot, the first
 * snapshot's latency and the CPU per MB when the emulator is built at spawn (fed as a real PTY
 * prints) versus when the job's log is replayed on the first request, and memory: 16 emulators
 * alone, and 16 live PTY jobs with their screens. `screenBenchmark()` returns the figures and
 * `screenRows()` the table rows, for `tests/bench/run.ts`; `node --import tsx tests/bench/screen.ts`
 * runs this part alone (about 30 s). Memory is measured in fresh child processes (`--expose-gc`).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SCREEN_CHUNK_BYTES, SCREEN_FEED_BYTES, TerminalScreen } from "../../src/core/screen/terminal-screen.ts";
import { REPO_ROOT } from "../helpers/hosts.ts";
import { startOnScreen } from "../helpers/screen-pty.ts";

const RUNS = 3;
const MB = 1e6;
const MiB = 1024 * 1024;
const COLS = 120;
const ROWS = 40;
/** Goal of issue 17: each live PTY job's screen costs under 2 MB. */
export const SCREEN_MEMORY_GOAL_MB = 2;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/**
 * About `bytes` of full-screen frames as htop draws them: per-row cursor moves, colours, reverse
 * video, bars, erase-to-end-of-line, a status bar, the cursor hidden and shown. Deterministic.
 */
export function redrawStream(bytes: number, cols = COLS, rows = ROWS): Buffer {
  let seed = 42;
  const next = (limit: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % limit;
  };
  const frames: string[] = [];
  let total = 0;
  for (let frame = 0; total < bytes; frame++) {
    let text = "\x1b[?25l\x1b[H";
    for (let cpu = 1; cpu <= 4; cpu++) {
      const user = next(40);
      const system = next(20);
      const bar = `\x1b[32m${"|".repeat(user)}\x1b[31m${"|".repeat(system)}\x1b[0m${" ".repeat(60 - user - system)}`;
      text += `\x1b[${cpu};1H\x1b[36m${cpu}\x1b[0m[${bar}\x1b[1m${(user + system).toFixed(1).padStart(5)}%\x1b[0m]\x1b[K`;
    }
    text += `\x1b[6;1H\x1b[30;42m${"  PID USER      PRI  NI  VIRT   RES   SHR S CPU% MEM%   TIME+  Command".padEnd(cols)}\x1b[0m`;
    for (let row = 7; row < rows; row++) {
      const line = `${String(1000 + next(90000)).padStart(5)} user${row % 3}     20   0 ${next(999)}M ${next(99)}M ${next(9)}M S ${next(100)}.${next(10)}  ${next(10)}.${next(10)} ${next(60)}:${String(next(60)).padStart(2, "0")}.${next(100)} /usr/bin/process-${frame % 97}-${row}`;
      text += `\x1b[${row};1H${row === 7 + (frame % 33) ? "\x1b[7m" : ""}${line.slice(0, cols)}\x1b[0m\x1b[K`;
    }
    text += `\x1b[${rows};1H\x1b[30;46mF1\x1b[0mHelp \x1b[30;46mF2\x1b[0mSetup \x1b[30;46mF10\x1b[0mQuit frame ${frame}\x1b[K\x1b[?25h`;
    frames.push(text);
    total += Buffer.byteLength(text);
  }
  return Buffer.from(frames.join(""), "utf8");
}

/** Feeds `bytes` as fast as the emulator parses them, never past its bound (nothing is skipped). */
async function feedAll(screen: TerminalScreen, bytes: Buffer): Promise<void> {
  for (let offset = 0; offset < bytes.length; offset += SCREEN_CHUNK_BYTES) {
    screen.write(bytes.subarray(offset, offset + SCREEN_CHUNK_BYTES));
    if (screen.pendingBytes >= SCREEN_FEED_BYTES) await screen.snapshot();
  }
  await screen.snapshot();
}

/** Wall time and CPU time of parsing `bytes` in a fresh 120×40 screen. */
async function parse(bytes: Buffer): Promise<{ ms: number; cpu: number }> {
  const screen = new TerminalScreen({ cols: COLS, rows: ROWS });
  const cpu = process.cpuUsage();
  const start = performance.now();
  await feedAll(screen, bytes);
  const result = { ms: performance.now() - start, cpu: cpuMs(cpu) };
  screen.dispose();
  return result;
}

/** Replay on the first request: read the job's log from disk and parse all of it, then take the snapshot. */
async function replayFirstSnapshot(logPath: string): Promise<{ ms: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const screen = new TerminalScreen({ cols: COLS, rows: ROWS });
  await feedAll(screen, await readFile(logPath));
  await screen.snapshot();
  const result = { ms: performance.now() - start, cpu: cpuMs(cpu) };
  screen.dispose();
  return result;
}

/**
 * Built at spawn: a real PTY job prints the log (`cat`) while its screen is fed chunk by chunk; then
 * the first snapshot. Also the same job without a screen, for the CPU the emulator adds.
 */
async function atSpawn(logPath: string, withScreen: boolean): Promise<{ wall: number; cpu: number; snapshot: number; skipped: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const job = startOnScreen(`cat '${logPath}'`, { cols: COLS, rows: ROWS, withoutScreen: !withScreen });
  await job.closed;
  const requested = performance.now();
  const snapshot = await job.screen.snapshot();
  const done = performance.now();
  job.stop();
  return { wall: done - start, cpu: cpuMs(cpu), snapshot: done - requested, skipped: snapshot.skippedBytes };
}

/**
 * Sixteen PTY jobs print 5 MB of redraws each at once: wall time until every screen is current, and
 * this process's event-loop delay meanwhile (each emulator parses in slices on its own timer).
 */
async function sixteenFloods(logPath: string, withScreen: boolean): Promise<{ wall: number; p99: number; max: number; skipped: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const start = performance.now();
  const jobs = Array.from({ length: 16 }, () => startOnScreen(`cat '${logPath}'`, { cols: COLS, rows: ROWS, withoutScreen: !withScreen }));
  await Promise.all(jobs.map((job) => job.closed));
  const snapshots = await Promise.all(jobs.map((job) => job.screen.snapshot()));
  const wall = performance.now() - start;
  delay.disable();
  for (const job of jobs) job.stop();
  return { wall, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, skipped: snapshots.reduce((sum, s) => sum + s.skippedBytes, 0) };
}

/** Median of RUNS of `work`, per field. */
async function medians<T extends Record<string, number>>(work: () => Promise<T>): Promise<T> {
  const results: T[] = [];
  for (let run = 0; run < RUNS; run++) results.push(await work());
  return Object.fromEntries(Object.keys(results[0]!).map((key) => [key, median(results.map((r) => r[key]!))])) as T;
}

export interface MemoryFigures {
  /** Heap plus array buffers per emulator, after a GC. */
  per_unit_MB: number;
  /** Resident memory per unit, after a GC (noisy: the allocator keeps pages). */
  rss_per_unit_MB: number;
}

/** Runs this file in a fresh Node with `--expose-gc` to measure memory of 16 `kind`s. */
function memoryInChild(kind: "emulators" | "pty-jobs"): MemoryFigures {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", self, `--memory=${kind}`], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  const line = child.stdout.trim().split("\n").at(-1) ?? "";
  if (child.status !== 0 || !line.startsWith("{")) throw new Error(`memory child (${kind}) failed: ${child.stderr || child.stdout}`);
  return JSON.parse(line) as MemoryFigures;
}

/** Inside the child: 16 units with a full screen, 100 lines of scrollback and a drawn alternate screen each. */
async function measureMemory(kind: string): Promise<MemoryFigures> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const COUNT = 16;
  const content = `${Array.from({ length: 200 }, (_, i) => `scrollback line ${i} ${"x".repeat(80)}`).join("\r\n")}\r\n\x1b[?1049h${redrawStream(8 * 1024).toString("latin1")}`;
  const measure = () => {
    gc();
    const usage = process.memoryUsage();
    return { heap: usage.heapUsed + usage.arrayBuffers, rss: usage.rss };
  };
  // Load and warm the emulator first, so its code is not counted.
  const warm = new TerminalScreen({ cols: COLS, rows: ROWS });
  warm.write(Buffer.from(content, "latin1"));
  await warm.snapshot();
  warm.dispose();
  const before = measure();
  const keep: { stop(): void }[] = [];
  if (kind === "emulators") {
    for (let i = 0; i < COUNT; i++) {
      const screen = new TerminalScreen({ cols: COLS, rows: ROWS });
      screen.write(Buffer.from(content, "latin1"));
      await screen.snapshot();
      keep.push({ stop: () => screen.dispose() });
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), "piue-bench-screen-"));
    writeFileSync(join(dir, "content"), Buffer.from(content, "latin1"));
    for (let i = 0; i < COUNT; i++) {
      const job = startOnScreen(`cat '${join(dir, "content")}'; exec sleep 120`, { cols: COLS, rows: ROWS });
      await job.waitForScreen((s) => s.alternate && s.lines.at(-1)?.includes("F10") === true, "the job's frame");
      keep.push(job);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const after = measure();
  for (const unit of keep) unit.stop();
  return {
    per_unit_MB: round((after.heap - before.heap) / COUNT / MB, 2),
    rss_per_unit_MB: round((after.rss - before.rss) / COUNT / MB, 2),
  };
}

export interface ScreenFigures {
  stream_MB: number;
  parse_MB_per_s: number;
  parse_cpu_ms_per_MB: number;
  snapshot_120x40_us: number;
  first_snapshot_ms: { at_spawn_1MB: number; at_spawn_10MB: number; replay_1MB: number; replay_10MB: number };
  cpu_ms_per_MB: { at_spawn: number; replay: number };
  pty_cat_10MB_ms: { with_screen: number; without_screen: number };
  pty_cat_10MB_skipped_MB: number;
  sixteen_pty_floods_5MB: {
    with_screen_ms: number;
    without_screen_ms: number;
    loop_p99_ms: number;
    loop_max_ms: number;
    loop_max_without_ms: number;
    skipped_MB: number;
  };
  memory: { emulator: MemoryFigures; pty_job: MemoryFigures };
}

export async function screenBenchmark(): Promise<ScreenFigures> {
  const dir = mkdtempSync(join(tmpdir(), "piue-bench-screen-"));
  try {
    const stream = redrawStream(10 * MiB);
    const small = stream.subarray(0, MiB);
    const logs = { "1MB": join(dir, "1MB.log"), "10MB": join(dir, "10MB.log") };
    writeFileSync(logs["1MB"], small);
    writeFileSync(logs["10MB"], stream);
    const fiveMB = join(dir, "5MB.log");
    writeFileSync(fiveMB, stream.subarray(0, 5 * MiB));
    await parse(small); // warm-up
    const parsed = await medians(() => parse(stream));
    const screen = new TerminalScreen({ cols: COLS, rows: ROWS });
    await feedAll(screen, small);
    for (let i = 0; i < 200; i++) screen.peek();
    const t0 = performance.now();
    for (let i = 0; i < 2000; i++) screen.peek();
    const snapshotUs = ((performance.now() - t0) / 2000) * 1000;
    screen.dispose();
    const replay1 = await medians(() => replayFirstSnapshot(logs["1MB"]));
    const replay10 = await medians(() => replayFirstSnapshot(logs["10MB"]));
    const spawn1 = await medians(() => atSpawn(logs["1MB"], true));
    const spawn10 = await medians(() => atSpawn(logs["10MB"], true));
    const bare10 = await medians(() => atSpawn(logs["10MB"], false));
    const sixteenBare = await medians(() => sixteenFloods(fiveMB, false));
    const sixteen = await medians(() => sixteenFloods(fiveMB, true));
    const emulator = memoryInChild("emulators");
    const ptyJob = memoryInChild("pty-jobs");
    const streamMB = stream.length / MB;
    return {
      stream_MB: round(streamMB, 2),
      parse_MB_per_s: round(streamMB / (parsed.ms / 1000)),
      parse_cpu_ms_per_MB: round(parsed.cpu / streamMB),
      snapshot_120x40_us: round(snapshotUs),
      first_snapshot_ms: {
        at_spawn_1MB: round(spawn1.snapshot, 2),
        at_spawn_10MB: round(spawn10.snapshot, 2),
        replay_1MB: round(replay1.ms),
        replay_10MB: round(replay10.ms),
      },
      cpu_ms_per_MB: { at_spawn: round((spawn10.cpu - bare10.cpu) / streamMB), replay: round(replay10.cpu / streamMB) },
      pty_cat_10MB_ms: { with_screen: round(spawn10.wall), without_screen: round(bare10.wall) },
      pty_cat_10MB_skipped_MB: round(spawn10.skipped / MB, 2),
      sixteen_pty_floods_5MB: {
        with_screen_ms: round(sixteen.wall),
        without_screen_ms: round(sixteenBare.wall),
        loop_p99_ms: round(sixteen.p99),
        loop_max_ms: round(sixteen.max),
        loop_max_without_ms: round(sixteenBare.max),
        skipped_MB: round(sixteen.skipped / MB, 2),
      },
      memory: { emulator, pty_job: ptyJob },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows the benchmark prints for this section. */
export function screenRows(f: ScreenFigures): [string, string][] {
  const worst = Math.max(f.memory.emulator.per_unit_MB, f.memory.pty_job.per_unit_MB);
  return [
    [`screen: parse ${f.stream_MB} MB of 120×40 redraws`, `${f.parse_MB_per_s} MB/s · ${f.parse_cpu_ms_per_MB} ms CPU per MB`],
    ["screen: one 120×40 snapshot", `${f.snapshot_120x40_us} µs`],
    [
      "screen: first snapshot after 1 MB / 10 MB",
      `at spawn ${f.first_snapshot_ms.at_spawn_1MB} / ${f.first_snapshot_ms.at_spawn_10MB} ms · replaying the log ${f.first_snapshot_ms.replay_1MB} / ${f.first_snapshot_ms.replay_10MB} ms`,
    ],
    [
      "screen: CPU per MB of output",
      `at spawn ${f.cpu_ms_per_MB.at_spawn} ms (every job) · replay ${f.cpu_ms_per_MB.replay} ms (on request)`,
    ],
    [
      "screen: `cat` 10 MB on a PTY",
      `with a screen ${f.pty_cat_10MB_ms.with_screen} ms (skipped ${f.pty_cat_10MB_skipped_MB} MB) · without ${f.pty_cat_10MB_ms.without_screen} ms`,
    ],
    [
      "screen: 16 PTY jobs `cat` 5 MB each at once",
      `with screens ${f.sixteen_pty_floods_5MB.with_screen_ms} ms (loop p99 ${f.sixteen_pty_floods_5MB.loop_p99_ms}, max ${f.sixteen_pty_floods_5MB.loop_max_ms} ms; skipped ${f.sixteen_pty_floods_5MB.skipped_MB} MB) · without ${f.sixteen_pty_floods_5MB.without_screen_ms} ms (loop max ${f.sixteen_pty_floods_5MB.loop_max_without_ms} ms)`,
    ],
    [
      "screen: memory per emulator / per live PTY job (16)",
      `${f.memory.emulator.per_unit_MB} / ${f.memory.pty_job.per_unit_MB} MB heap+buffers · RSS ${f.memory.emulator.rss_per_unit_MB} / ${f.memory.pty_job.rss_per_unit_MB} MB`,
    ],
    [
      `goal: screen < ${SCREEN_MEMORY_GOAL_MB} MB per live PTY job`,
      worst < SCREEN_MEMORY_GOAL_MB && f.memory.pty_job.rss_per_unit_MB < SCREEN_MEMORY_GOAL_MB ? "met" : "MISSED",
    ],
  ];
}

async function main() {
  const memoryKind = process.argv.find((arg) => arg.startsWith("--memory="))?.slice("--memory=".length);
  if (memoryKind) {
    console.log(JSON.stringify(await measureMemory(memoryKind)));
    process.exit(0); // the PTY jobs' sleeps were killed; nothing else to wait for
  }
  const rows = screenRows(await screenBenchmark());
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
