/**
 * `npm run bench`: side-by-side figures for this extension, Pi's built-in bash tool and baselines
 * (a raw shell, `cat` and a bare Node reader on the same pipe), measured in one run on one machine,
 * through the real Pi CLI offline (faux provider). Every comparison is a ratio of medians taken
 * inside this one invocation, with the contenders interleaved; latency is timed where a client of Pi sees
 * it, at Pi's tool events. Prints a table and writes tests/bench/results/<time>.json (and latest.json).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { currentShellHost, resolveShell } from "../../src/core/request/shell.ts";
import type { Run, ToolRecord } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, say } from "../helpers/scripted-model.ts";
import { floodModeGoal, floodModeRow, isolatedFloods } from "./flood-modes.ts";
import {
  execUntilExit,
  floodErrors,
  hostMemory,
  type LoopDelay,
  loopDelay,
  type MemoryFigures,
  nodeReaderMs,
  rawShellMs,
  sixteenFloods,
} from "./floods.ts";
import { hostileLoopDelay, hostileRows, stripperThroughput, THROUGHPUT_GOAL_MBPS } from "./hostile.ts";
import { ISOLATED_DEFAULTS, isolatedGoals, isolatedLatencyBenchmark, isolatedRows } from "./isolated-latency.ts";
import { latencyBenchmark, latencyGoals, latencyRows } from "./latency.ts";
import { type LongSoakFigures, longSoak } from "./long-soak.ts";
import { patternCostBenchmark, patternCostGoals, patternCostRows } from "./pattern-cost.ts";
import { formatPromptHistory, formatPromptTokens, PROMPT_BUDGET_TOKENS, promptTokens } from "./prompt-tokens.ts";
import { SCREEN_MEMORY_GOAL_MB, screenBenchmark, screenRows } from "./screen.ts";
import { type SoakFigures, soak } from "./soak.ts";
import { speakUpBenchmark, speakUpGoals, speakUpRows } from "./speak-up.ts";
import { tokenWorkload } from "./token-workload.ts";
import { watchdogCost } from "./watchdog-cost.ts";
import { workflowBenchmark, workflowRows } from "./workflow.ts";

const host = PI_HOSTS.at(-1)!; // the newest Pi 1.x
const bash = resolveShell("bash", currentShellHost()).path;
const FAST = process.env.BENCH_FAST === "1";
/** Runs of each latency pace (every figure is the median of the runs' medians, with their range): `BENCH_RUNS`, default 3. */
const LATENCY_RUNS = Number(process.env.BENCH_RUNS) || 3;
/**
 * Calls per latency block (30 in the full run, as the isolated mode times) and messages of eight per block. `BENCH_FAST=1`
 * keeps three runs of every shape in both modes but times fewer calls in each: it must fit 3 minutes on
 * a busy 2-core machine, where a fresh Pi alone takes seconds to start.
 */
const LATENCY_CALLS = FAST ? 10 : 30;
const EIGHT_ROUNDS = FAST ? 3 : 6;
/** Untimed calls before each back-to-back block: a third of a fast run's block would be five. */
const LATENCY_WARMUP = FAST ? 3 : 5;
const ISOLATED_SIZES = FAST ? { calls: 10, eightRounds: 3, shapesPerPi: 3 } : ISOLATED_DEFAULTS;
/**
 * Rounds of each flood part (`BENCH_ROUNDS`, default 3; 1 with `BENCH_FAST=1`, which also skips the
 * flood's baselines without a goal, the patterns' floods, the hostile-output, watchdog, token, screen
 * and workflow parts and both soaks): three, as every other figure's median is of three, so the full
 * run fits its 12 minutes.
 */
const FLOOD_RUNS = Number(process.env.BENCH_ROUNDS) || (FAST ? 1 : 3);
/** Rounds of the sixteen floods at once (about 12 s a round for each tool): two, one in a fast run. */
const SIXTEEN_RUNS = Math.min(FLOOD_RUNS, 2);
/** Rounds of the flood in the second mode (a fresh Pi each, about 12 s a round). */
const ISOLATED_FLOOD_RUNS = FAST ? 2 : 3;
/** Calls of the soak (and of its control through Pi's bash tool), with a `/reload` every fifth of them. */
const SOAK_CALLS = 1_000;
/**
 * Minutes of the long soak (`npm run bench:soak` alone). It runs beside the token counts and the soak
 * above, which measure tokens and leaks, not time; the fast run leaves both soaks to `npm run bench:soak`.
 */
const LONG_SOAK = { minutes: 5, reloadEverySeconds: 60 };
const progress = (part: string) => console.error(`[bench] ${part} (${Math.round(performance.now() / 1000)} s)`);
const FLOOD = "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 99";
const SMALL_FLOOD = "head -c 50000000 /dev/zero | tr '\\0' x | fold -w 99";
const PROGRESS = "for i in $(seq 1 3000); do printf '\\rprogress %d%%' $((i / 30)); done; echo; echo done";

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Total wall time of the tool calls of a run, and the bytes of text the model saw. */
function summary(run: Run): { ms: number; modelBytes: number; calls: number; errors: number } {
  const tools = run.tools.filter((tool: ToolRecord) => !tool.name.startsWith("bench_"));
  return {
    ms: tools.reduce((sum, tool) => sum + (tool.durationMs ?? 0), 0),
    modelBytes: tools.reduce((sum, tool) => sum + Buffer.byteLength(tool.text), 0),
    calls: tools.length,
    errors: tools.filter((tool) => tool.isError).length,
  };
}

/**
 * A Pi host with both tools. Its temporary files go into its own temp dir, removed when it closes:
 * Pi's bash tool keeps each long output in a file there (some 5 GB over a run's floods).
 */
const startPi = (env: Record<string, string> = {}) =>
  PiRpcHost.start(host, {
    extensions: [EXTENSION_ENTRY, join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts")],
    args: ["--keep-builtin-bash"],
    env,
    setup: (dirs) => {
      const tmp = join(dirs.root, "tmp");
      mkdirSync(tmp);
      return { TMPDIR: tmp };
    },
  });

/** How far a run's peak rose over the memory measured (after a GC) just before it. */
function grown(before: MemoryFigures["now"], peak: MemoryFigures["peak"]): MemoryFigures["peak"] {
  return { rss: peak.rss - before.rss, heap: peak.heap - before.heap, outside: peak.outside - before.outside };
}

/** Each round's ratio of `ours` to `theirs`, as `min–max`. */
function ratioRange(ours: number[], theirs: number[]): string {
  const ratios = ours.map((value, i) => value / theirs[i]!);
  return `${round(Math.min(...ratios))}–${round(Math.max(...ratios))}`;
}

/** The soak's goals: what our session keeps beyond the control's, and nothing left or told twice. */
function soakGoals(runs: Record<"exec_command" | "bash", SoakFigures>): Record<string, boolean> {
  const ours = runs.exec_command;
  return {
    [`soak of ${ours.calls} calls: heap after GC ≤ the bash tool's + 10 MiB`]:
      ours.heap_after_gc_MiB.growth <= runs.bash.heap_after_gc_MiB.growth + 10,
    "soak: descriptors flat, no job left, no exit told twice":
      ours.descriptors.after <= ours.descriptors.before + 2 && ours.leftover_processes === 0 && ours.exits_reported_twice.length === 0,
  };
}

/** The long soak's goal: at every idle point Pi holds what it held after its warm-up; nothing of a job outlives Pi. */
function longSoakGoals(long: LongSoakFigures): Record<string, boolean> {
  return { [`long soak of ${long.minutes} min: idle points as after the warm-up, nothing marked after quit`]: long.leaks.length === 0 };
}

function longSoakRows(long: LongSoakFigures): [string, string][] {
  const last = long.idlePoints.at(-1);
  return [
    [
      `long soak, ${long.minutes} min, ${long.calls} calls, ${long.reloads} reloads`,
      `warm-up: ${long.warmUp.descriptors} descriptors · ${long.idlePoints.length} idle points, the last: ${last ? `${last.descriptors} descriptors, ${last.terminals} terminals, ${last.logs} logs, ${last.jobProcesses} job processes after killing ${last.listed} listed` : "none"} · marked after quit ${long.markedAfterQuit} · leaks: ${long.leaks.join("; ") || "none"}`,
    ],
  ];
}

function soakRows(runs: Record<"exec_command" | "bash", SoakFigures>): [string, string][] {
  const { exec_command: ours, bash } = runs;
  return [
    [
      `soak, ${ours.calls} calls, ${ours.reloads} reloads`,
      `heap after GC +${ours.heap_after_gc_MiB.growth} MiB (bash tool +${bash.heap_after_gc_MiB.growth}) · rss +${ours.rss_after_gc_MiB.growth} (bash tool +${bash.rss_after_gc_MiB.growth}) · descriptors ${ours.descriptors.before} → ${ours.descriptors.after} · jobs left ${ours.leftover_processes} · exits told twice ${ours.exits_reported_twice.length} · ${ours.seconds} s`,
    ],
  ];
}

async function main() {
  const started = performance.now();
  // 7b. The fixed prompt every request carries (two Pi processes of its own: our definitions and
  // system-prompt lines, as the host sends them), while this Pi starts and warms up: neither is timed.
  const promptRun = promptTokens(host);
  promptRun.catch(() => {}); // awaited below, before the first timed part
  const pi = await startPi();
  try {
    // Warm-up, then idle memory after a full GC.
    await pi.run("warm up", (view) =>
      view.turn < 3 ? callAll(["exec_command", { cmd: "true" }], ["bash", { command: "true" }]) : say("ok"),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idle = (await hostMemory(pi, { gc: true, reset: true })).now;
    const prompt = await promptRun;

    progress("latency");
    // 1. Latency of `true` at Pi's events: back to back, at an agent's pace, eight in one message.
    const latency = await latencyBenchmark(pi, LATENCY_RUNS, LATENCY_CALLS, LATENCY_WARMUP, EIGHT_ROUNDS);
    progress("latency, a fresh Pi per tool");
    // 1b. The same in the second mode: a fresh JSON-mode Pi per tool and shape, the model streaming.
    const isolated = await isolatedLatencyBenchmark(LATENCY_RUNS, host, ISOLATED_SIZES);
    // 1c. The 200 MB flood in the second mode: a fresh JSON-mode Pi per round against a bare Node reader.
    progress("one flood, a fresh Pi per round");
    const isolatedFlood = await isolatedFloods(ISOLATED_FLOOD_RUNS, host);

    progress("one flood");
    // 2. One 200 MB flood, interleaved: exec_command (+ polls), bash, and baselines on the same pipe.
    const flood = {
      exec: [] as number[],
      bash: [] as number[],
      raw: [] as number[],
      cat: [] as number[],
      node: [] as number[],
      nodeOwnSession: [] as number[],
      execPeak: [] as MemoryFigures["peak"][],
      bashPeak: [] as MemoryFigures["peak"][],
      execModelBytes: 0,
      bashModelBytes: 0,
    };
    for (let i = 0; i < FLOOD_RUNS; i++) {
      let before = (await hostMemory(pi, { gc: true, reset: true })).now;
      const execSummary = summary(await pi.run(`flood exec ${i}`, execUntilExit(FLOOD), 300_000));
      flood.execPeak.push(grown(before, (await hostMemory(pi, {})).peak));
      flood.exec.push(execSummary.ms);
      flood.execModelBytes = execSummary.modelBytes;
      before = (await hostMemory(pi, { gc: true, reset: true })).now;
      const bashSummary = summary(
        await pi.run(`flood bash ${i}`, (view) => (view.turn === 0 ? call("bash", { command: FLOOD }) : say("done")), 300_000),
      );
      flood.bashPeak.push(grown(before, (await hostMemory(pi, {})).peak));
      flood.bash.push(bashSummary.ms);
      flood.bashModelBytes = bashSummary.modelBytes;
      // The baselines without a goal (the shell into /dev/null, `cat`, the reader in Pi's session): not in a fast run.
      if (!FAST) {
        flood.raw.push(rawShellMs(bash, `${FLOOD} > /dev/null`));
        flood.cat.push(rawShellMs(bash, `${FLOOD} | cat > /dev/null`));
        flood.node.push(await nodeReaderMs(bash, FLOOD));
      }
      flood.nodeOwnSession.push(await nodeReaderMs(bash, FLOOD, true));
    }

    progress("sixteen floods");
    // 3. Sixteen 50 MB floods at once through each tool: wall, memory and the host's event-loop delay.
    const sixteen = {
      wall: [] as number[],
      peak: [] as MemoryFigures["peak"][],
      errors: 0,
      loop: [] as LoopDelay[],
      bashWall: [] as number[],
      bashLoop: [] as LoopDelay[],
    };
    // Ours first, every round: Pi's bash tool keeps its output in memory, which would raise the baseline.
    for (let i = 0; i < SIXTEEN_RUNS; i++) {
      const before = (await hostMemory(pi, { gc: true, reset: true })).now;
      await loopDelay(pi);
      const t0 = performance.now();
      const ours = await pi.run(`sixteen ${i}`, sixteenFloods("exec_command", SMALL_FLOOD), 300_000);
      sixteen.wall.push(performance.now() - t0);
      const loop = await loopDelay(pi);
      sixteen.peak.push(grown(before, (await hostMemory(pi, {})).peak));
      sixteen.errors += floodErrors(ours);
      sixteen.loop.push(loop);
    }
    // Pi's bash tool beside them, for comparison only (no goal): one round, none in a fast run.
    for (let i = 0; i < (FAST ? 0 : 1); i++) {
      await loopDelay(pi);
      const t0 = performance.now();
      await pi.run(`sixteen bash ${i}`, sixteenFloods("bash", SMALL_FLOOD), 300_000);
      sixteen.bashWall.push(performance.now() - t0);
      sixteen.bashLoop.push(await loopDelay(pi));
    }

    // 4. Model-visible bytes of a progress-bar-heavy output.
    const progressExec = summary(await pi.run("progress exec", execUntilExit(PROGRESS)));
    const progressBash = summary(
      await pi.run("progress bash", (view) => (view.turn === 0 ? call("bash", { command: PROGRESS }) : say("done"))),
    );

    // 5. Hostile output: the stripper's throughput per adversarial shape, and the loop delay while a job prints each.
    progress("hostile output and watchdog");
    const hostile = FAST ? [] : stripperThroughput();
    if (!FAST) await hostileLoopDelay(pi, hostile);
    // 6. The host-death watchdog: a job's registration on the host, and the watchdog's start.
    const watchdog = FAST ? undefined : await watchdogCost();

    // 10. What jobs that speak up cost: an unread flood with a pattern, the scan of listening addresses.
    progress("speak-up");
    // Seven rounds (two in a fast run): two floods of the same command differ by 5–10 % from one run to the next here.
    const speakUp = await speakUpBenchmark(FAST ? 2 : 7);
    // 10b. Patterns cannot stall Pi: refusals, each accepted pattern's MB/s per shape, the loop during floods.
    progress("pattern cost");
    // A fast run leaves out its 200 MB floods (the loop's maximum), as it leaves out the hostile shapes' loop delay.
    const patternCost = await patternCostBenchmark(!FAST);
    // 11. The long soak (issue 36) beside what measures tokens, leaks and seconds of waiting, not
    // milliseconds: the token counts, a dev server's "ready", and a long session's soak and its control
    // through Pi's bash tool, each in a host of its own.
    progress(FAST ? "tokens" : "long soak, tokens, workflow and soak");
    const longRun = FAST
      ? undefined
      : longSoak(host, LONG_SOAK.minutes, { reloadEverySeconds: LONG_SOAK.reloadEverySeconds, log: console.error });
    // 8. PTY screens: the emulator's parsing, snapshots, its cost at spawn against replaying the log,
    // memory. Beside the long soak: its goal is memory, measured in processes of its own; its times
    // have no goal and are taken on a machine the soak keeps busy (`npm run bench:screen` alone).
    const screen = FAST ? undefined : await screenBenchmark();
    // 7. Model-visible tokens per call over a fixed workload (its own Pi processes).
    const tokenRun = FAST ? undefined : await tokenWorkload(host);
    const tokenRow = (format: string) => tokenRun?.rows.find((row) => row.format === format);
    // 9. A dev server's "ready": calls and seconds with until_pattern, plain polls, and Pi's bash tool.
    const workflow = FAST ? undefined : await workflowBenchmark(pi);
    // The soak and its control at once: each measures its own host's heap and descriptors, not time.
    const soakRuns = FAST
      ? undefined
      : await Promise.all([soak(host, "exec_command", SOAK_CALLS, SOAK_CALLS / 25), soak(host, "bash", SOAK_CALLS, SOAK_CALLS / 25)]).then(
          ([exec_command, bash]) => ({ exec_command, bash }),
        );
    const longSoakRun = await longRun;

    const grownBy = (growths: MemoryFigures["peak"][], key: "rss" | "heap" | "outside") => round(median(growths.map((g) => g[key])), 1);
    /** A baseline's median and a ratio over it: undefined where a fast run left the baseline out. */
    const baseline = (values: number[]) => (values.length > 0 ? round(median(values)) : undefined);
    const over = (values: number[], base: number[]) => (base.length > 0 ? round(median(values) / median(base)) : undefined);
    const figures = {
      latency,
      isolated_latency: isolated,
      isolated_flood_200MB: isolatedFlood,
      flood_200MB_ms: {
        exec_command: round(median(flood.exec)),
        bash_tool: round(median(flood.bash)),
        raw_shell_into_dev_null: baseline(flood.raw),
        cat_reader: baseline(flood.cat),
        bare_node_reader: baseline(flood.node),
        bare_node_reader_own_session: round(median(flood.nodeOwnSession)),
      },
      flood_ratio_exec_over_cat: over(flood.exec, flood.cat),
      flood_ratio_exec_over_node_reader: over(flood.exec, flood.node),
      flood_ratio_exec_over_node_reader_own_session: round(median(flood.exec) / median(flood.nodeOwnSession)),
      flood_ratio_exec_over_node_reader_own_session_range: ratioRange(flood.exec, flood.nodeOwnSession),
      flood_ratio_node_reader_own_session_over_cat: over(flood.nodeOwnSession, flood.cat),
      flood_ratio_exec_over_raw: over(flood.exec, flood.raw),
      flood_ratio_exec_over_bash: round(median(flood.exec) / median(flood.bash)),
      flood_peak_over_idle_MiB: {
        exec_command: {
          rss: grownBy(flood.execPeak, "rss"),
          heap: grownBy(flood.execPeak, "heap"),
          outside_heap: grownBy(flood.execPeak, "outside"),
        },
        bash_tool: {
          rss: grownBy(flood.bashPeak, "rss"),
          heap: grownBy(flood.bashPeak, "heap"),
          outside_heap: grownBy(flood.bashPeak, "outside"),
        },
      },
      sixteen_floods_50MB: {
        wall_ms: round(median(sixteen.wall)),
        peak_rss_over_idle_MiB: grownBy(sixteen.peak, "rss"),
        peak_heap_over_idle_MiB: grownBy(sixteen.peak, "heap"),
        peak_outside_heap_over_idle_MiB: grownBy(sixteen.peak, "outside"),
        errors: sixteen.errors,
        event_loop_p99_ms: round(median(sixteen.loop.map((l) => l.whileTools.p99))),
        event_loop_max_ms: round(median(sixteen.loop.map((l) => l.whileTools.max))),
        event_loop_own_p99_ms: round(median(sixteen.loop.map((l) => l.whileTools.own_p99))),
        event_loop_own_max_ms: round(median(sixteen.loop.map((l) => l.whileTools.own_max))),
        whole_run_event_loop_p99_ms: round(median(sixteen.loop.map((l) => l.p99))),
        whole_run_event_loop_max_ms: round(median(sixteen.loop.map((l) => l.max))),
        ...(sixteen.bashWall.length
          ? {
              bash_tool_wall_ms: round(median(sixteen.bashWall)),
              bash_tool_event_loop_p99_ms: round(median(sixteen.bashLoop.map((l) => l.whileTools.p99))),
              bash_tool_event_loop_max_ms: round(median(sixteen.bashLoop.map((l) => l.whileTools.max))),
              bash_tool_whole_run_event_loop_p99_ms: round(median(sixteen.bashLoop.map((l) => l.p99))),
              bash_tool_whole_run_event_loop_max_ms: round(median(sixteen.bashLoop.map((l) => l.max))),
            }
          : {}),
      },
      model_visible_bytes: {
        flood_exec_command: flood.execModelBytes,
        flood_bash_tool: flood.bashModelBytes,
        progress_exec_command: progressExec.modelBytes,
        progress_bash_tool: progressBash.modelBytes,
      },
      idle_after_gc_MiB: { rss: round(idle.rss, 1), heap: round(idle.heap, 1), outside_heap: round(idle.outside, 1) },
      hostile_output: hostile,
      watchdog,
      fixed_prompt_o200k: {
        total: prompt.total,
        definitions: prompt.definitions,
        per_tool: prompt.perTool,
        prompt_lines: prompt.lineTokens,
      },
      tokens_o200k: Object.fromEntries(
        (tokenRun?.rows ?? []).map((row) => [
          row.format,
          {
            calls: row.calls,
            header_median: row.header.median,
            header_mean: row.header.mean,
            total_median: row.total.median,
            total_sum: row.total.sum,
          },
        ]),
      ),
      screen,
      workflow,
      speak_up: speakUp,
      pattern_cost: patternCost,
      ...(soakRuns ? { soak: soakRuns } : {}),
      ...(longSoakRun ? { long_soak: longSoakRun } : {}),
    };
    const worstShape = Math.min(...hostile.map((shape) => shape.mb_per_s));
    const goals = {
      ...latencyGoals(latency),
      ...isolatedGoals(isolated),
      ...floodModeGoal("isolated", isolatedFlood),
      "200 MB flood ≤ 1.0× a bare Node reader of it in a session of its own": figures.flood_ratio_exec_over_node_reader_own_session <= 1.0,
      ...speakUpGoals(speakUp),
      ...patternCostGoals(patternCost),
      ...(soakRuns ? soakGoals(soakRuns) : {}),
      [`fixed prompt ≤ ${PROMPT_BUDGET_TOKENS} tokens (o200k)`]: prompt.total <= PROMPT_BUDGET_TOKENS,
      ...(longSoakRun ? longSoakGoals(longSoakRun) : {}),
      "one flood ≤ idle + 30 MiB": figures.flood_peak_over_idle_MiB.exec_command.rss <= 30,
      "sixteen floods ≤ idle + 90 MiB": figures.sixteen_floods_50MB.peak_rss_over_idle_MiB <= 90,
      "sixteen floods: event-loop p99 ≤ 40 ms": figures.sixteen_floods_50MB.event_loop_p99_ms <= 40,
      "sixteen floods: event-loop max ≤ 100 ms": figures.sixteen_floods_50MB.event_loop_max_ms <= 100,
      ...(FAST
        ? {}
        : {
            [`hostile output: stripper ≥ ${THROUGHPUT_GOAL_MBPS} MB/s on the worst shape`]: worstShape >= THROUGHPUT_GOAL_MBPS,
            "watchdog registration < 1 ms per job (p99)": (figures.watchdog?.registration_us.p99 ?? Infinity) < 1_000,
            "median header ≤ 40 tokens (o200k)": (tokenRow("default")?.header.median ?? Infinity) <= 40,
          }),
      ...(screen
        ? {
            [`screen < ${SCREEN_MEMORY_GOAL_MB} MB per live PTY job`]:
              Math.max(screen.memory.emulator.per_unit_MB, screen.memory.pty_job.per_unit_MB, screen.memory.pty_job.rss_per_unit_MB) <
              SCREEN_MEMORY_GOAL_MB,
          }
        : {}),
    };
    const machine = {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: cpus().length,
      node: process.version,
      pi: host.version,
      platform: `${process.platform} ${process.arch}`,
      date: new Date().toISOString(),
      runs: {
        latency: LATENCY_RUNS,
        latency_calls: LATENCY_CALLS,
        floods: FLOOD_RUNS,
        sixteen_floods: SIXTEEN_RUNS,
        soak_calls: SOAK_CALLS,
      },
      fast: FAST,
      bench_seconds: round((performance.now() - started) / 1000, 1),
    };
    const results = { machine, figures, goals };
    const dir = join(REPO_ROOT, "tests", "bench", "results");
    mkdirSync(dir, { recursive: true });
    const json = `${JSON.stringify(results, null, 2)}\n`;
    writeFileSync(join(dir, `${machine.date.replace(/[:.]/g, "-")}.json`), json);
    writeFileSync(join(dir, "latest.json"), json);

    const rows: [string, string][] = [
      ["machine", `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, Pi ${machine.pi}`],
      ...latencyRows(latency),
      ...isolatedRows(isolated),
      floodModeRow("isolated", isolatedFlood),
      [
        "200 MB flood (median ms)",
        `exec_command ${figures.flood_200MB_ms.exec_command} · bash tool ${figures.flood_200MB_ms.bash_tool} · cat ${figures.flood_200MB_ms.cat_reader ?? "—"} · bare Node reader ${figures.flood_200MB_ms.bare_node_reader ?? "—"} · into /dev/null ${figures.flood_200MB_ms.raw_shell_into_dev_null ?? "—"} → ${figures.flood_ratio_exec_over_node_reader_own_session}× the Node reader in its own session (${figures.flood_ratio_exec_over_node_reader_own_session_range} over the rounds; ${figures.flood_ratio_exec_over_cat ?? "—"}× cat, the machine's limit)`,
      ],
      ...speakUpRows(speakUp),
      ...patternCostRows(patternCost),
      ...(soakRuns ? soakRows(soakRuns) : []),
      ...(longSoakRun ? longSoakRows(longSoakRun) : []),
      [
        "flood peak over idle (MiB)",
        `exec_command rss +${figures.flood_peak_over_idle_MiB.exec_command.rss} (heap +${figures.flood_peak_over_idle_MiB.exec_command.heap}, outside heap +${figures.flood_peak_over_idle_MiB.exec_command.outside_heap}) · bash tool rss +${figures.flood_peak_over_idle_MiB.bash_tool.rss} (idle after GC ${figures.idle_after_gc_MiB.rss})`,
      ],
      [
        "16 × 50 MB floods",
        `wall ${figures.sixteen_floods_50MB.wall_ms} ms · peak rss +${figures.sixteen_floods_50MB.peak_rss_over_idle_MiB} MiB (heap +${figures.sixteen_floods_50MB.peak_heap_over_idle_MiB}, outside +${figures.sixteen_floods_50MB.peak_outside_heap_over_idle_MiB}) · errors ${figures.sixteen_floods_50MB.errors} · loop while tools ran p99 ${figures.sixteen_floods_50MB.event_loop_p99_ms} ms, max ${figures.sixteen_floods_50MB.event_loop_max_ms} ms (less the waits for a core: ${figures.sixteen_floods_50MB.event_loop_own_p99_ms} / ${figures.sixteen_floods_50MB.event_loop_own_max_ms} ms; whole run ${figures.sixteen_floods_50MB.whole_run_event_loop_p99_ms} / ${figures.sixteen_floods_50MB.whole_run_event_loop_max_ms} ms)`,
      ],
      [
        "16 × 50 MB floods, Pi's bash tool",
        FAST
          ? "not run in a fast run"
          : `wall ${figures.sixteen_floods_50MB.bash_tool_wall_ms} ms · loop while tools ran p99 ${figures.sixteen_floods_50MB.bash_tool_event_loop_p99_ms} ms, max ${figures.sixteen_floods_50MB.bash_tool_event_loop_max_ms} ms (whole run ${figures.sixteen_floods_50MB.bash_tool_whole_run_event_loop_p99_ms} / ${figures.sixteen_floods_50MB.bash_tool_whole_run_event_loop_max_ms} ms)`,
      ],
      [
        "model-visible bytes, flood",
        `exec_command ${figures.model_visible_bytes.flood_exec_command} · bash tool ${figures.model_visible_bytes.flood_bash_tool}`,
      ],
      [
        "model-visible bytes, progress bar",
        `exec_command ${figures.model_visible_bytes.progress_exec_command} · bash tool ${figures.model_visible_bytes.progress_bash_tool}`,
      ],
      ["fixed prompt (o200k)", `${formatPromptTokens(prompt)}; history ${formatPromptHistory(prompt.total)}`],
      ...(workflow ? workflowRows(workflow) : []),
      ...(hostile.length > 0 ? hostileRows(hostile) : []),
      ...(watchdog
        ? ([
            [
              "watchdog, per job registration (µs)",
              `mean ${watchdog.registration_us.mean} · p99 ${watchdog.registration_us.p99} · max ${watchdog.registration_us.max} (${watchdog.registration_us.count} registrations)`,
            ],
            [
              "watchdog start (median ms)",
              `spawn ${watchdog.start_ms.spawn_median} · first job recorded ${watchdog.start_ms.first_job_recorded_median} (${watchdog.start_ms.starts} starts)`,
            ],
          ] as [string, string][])
        : []),
      ...(screen ? screenRows(screen).filter(([label]) => !label.startsWith("goal:")) : []),
      ...Object.entries(goals).map(([goal, met]) => [`goal: ${goal}`, met ? "met" : "MISSED"] as [string, string]),
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
    if (tokenRun) console.log(`\no200k tokens per call over the token workload\n${tokenRun.table}`);
    console.log(`\nwritten: tests/bench/results/latest.json (${machine.bench_seconds} s)`);
  } finally {
    await pi.close(60_000);
  }
}

await main();
