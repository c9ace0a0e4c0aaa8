/**
 * `npm run bench`: side-by-side figures for this extension, Pi's built-in bash tool and a raw shell,
 * measured in one run on one machine, through the real Pi CLI offline (faux provider). Every
 * comparison is a ratio of medians taken inside this one invocation, with the contenders interleaved.
 * Prints a table and writes tests/bench/results/<time>.json (and latest.json).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { currentShellHost, resolveShell } from "../../src/core/shell.ts";
import type { Run, ToolRecord } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, type ModelStep, type ModelView, say } from "../helpers/scripted-model.ts";
import { hostileLoopDelay, hostileRows, stripperThroughput, THROUGHPUT_GOAL_MBPS } from "./hostile.ts";
import { SCREEN_MEMORY_GOAL_MB, screenBenchmark, screenRows } from "./screen.ts";
import { tokenWorkload } from "./token-workload.ts";
import { watchdogCost } from "./watchdog-cost.ts";
import { workflowBenchmark, workflowRows } from "./workflow.ts";

const host = PI_HOSTS.at(-1)!; // the newest Pi 1.x
const bash = resolveShell("bash", currentShellHost()).path;
const LATENCY_CALLS = 30;
const LATENCY_WARMUP = 5;
const FLOOD_RUNS = 3;
const FLOOD = "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 99";
const SMALL_FLOOD = "head -c 50000000 /dev/zero | tr '\\0' x | fold -w 99";
const PROGRESS = "for i in $(seq 1 3000); do printf '\\rprogress %d%%' $((i / 30)); done; echo; echo done";
const MiB = 1024 * 1024;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Resident memory of `pid` in bytes, from /proc. */
function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Samples the peak RSS of `pid` while `work` runs. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rss(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rss(pid));
  }, 20);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, rss(pid)) };
  } finally {
    clearInterval(timer);
  }
}

/** Wall time of a raw shell running `command`, in ms. */
function rawShellMs(command: string): number {
  const start = performance.now();
  const result = spawnSync(bash, ["-c", command], { stdio: "ignore" });
  if (result.status !== 0) throw new Error(`raw shell failed: ${command}`);
  return performance.now() - start;
}

/** Runs a command through exec_command, polling until it exits; returns the calls. */
function execUntilExit(command: string): (view: ModelView) => ModelStep {
  return (view) => {
    const last = view.last.at(-1);
    if (!last) return call("exec_command", { cmd: command, yield_time_ms: 30_000 });
    if (last.details?.session_id !== undefined && last.details?.status === "running") {
      return call("write_stdin", { session_id: last.details.session_id, yield_time_ms: 30_000 });
    }
    return say("done");
  };
}

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

async function main() {
  const started = performance.now();
  const pi = await PiRpcHost.start(host, {
    extensions: [EXTENSION_ENTRY, join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts")],
    args: ["--keep-builtin-bash"],
  });
  try {
    // Warm-up, then idle memory.
    await pi.run("warm up", (view) =>
      view.turn < 3 ? callAll(["exec_command", { cmd: "true" }], ["bash", { command: "true" }]) : say("ok"),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idle = rss(pi.pid);

    // 1. Latency of `true`, interleaved: exec_command, bash, raw spawn.
    const latency = { exec: [] as number[], bash: [] as number[], raw: [] as number[] };
    const latencyRun = await pi.run("latency", (view) => {
      const n = view.turn;
      if (n >= 2 * (LATENCY_CALLS + LATENCY_WARMUP)) return say("done");
      latency.raw.push(rawShellMs("true"));
      return n % 2 === 0 ? call("exec_command", { cmd: "true" }) : call("bash", { command: "true" });
    });
    const latencyTools = latencyRun.tools.slice(2 * LATENCY_WARMUP);
    latency.exec = latencyTools.filter((t) => t.name === "exec_command").map((t) => t.durationMs!);
    latency.bash = latencyTools.filter((t) => t.name === "bash").map((t) => t.durationMs!);
    latency.raw = latency.raw.slice(2 * LATENCY_WARMUP);

    // 2. One 200 MB flood, interleaved: exec_command (+ polls), bash, raw shell into /dev/null.
    const flood = {
      exec: [] as number[],
      bash: [] as number[],
      raw: [] as number[],
      execPeak: [] as number[],
      bashPeak: [] as number[],
      execModelBytes: 0,
      bashModelBytes: 0,
    };
    for (let i = 0; i < FLOOD_RUNS; i++) {
      const exec = await peakRss(pi.pid, () => pi.run(`flood exec ${i}`, execUntilExit(FLOOD), 300_000));
      const execSummary = summary(exec.result);
      flood.exec.push(execSummary.ms);
      flood.execPeak.push(exec.peak - idle);
      flood.execModelBytes = execSummary.modelBytes;
      const viaBash = await peakRss(pi.pid, () =>
        pi.run(`flood bash ${i}`, (view) => (view.turn === 0 ? call("bash", { command: FLOOD }) : say("done")), 300_000),
      );
      const bashSummary = summary(viaBash.result);
      flood.bash.push(bashSummary.ms);
      flood.bashPeak.push(viaBash.peak - idle);
      flood.bashModelBytes = bashSummary.modelBytes;
      flood.raw.push(rawShellMs(`${FLOOD} > /dev/null`));
    }

    // 3. Sixteen 50 MB floods at once, polled to completion; the event-loop delay inside the host.
    const sixteen = { wall: [] as number[], peak: [] as number[], errors: 0, loopP99: [] as number[], loopMax: [] as number[] };
    for (let i = 0; i < FLOOD_RUNS; i++) {
      await pi.run("reset loop delay", (view) => (view.turn === 0 ? call("bench_loop_delay", { reset: true }) : say("ok")));
      const t0 = performance.now();
      const measured = await peakRss(pi.pid, () =>
        pi.run(
          `sixteen ${i}`,
          (view) => {
            if (view.turn === 0)
              return callAll(
                ...Array.from(
                  { length: 16 },
                  () => ["exec_command", { cmd: SMALL_FLOOD, yield_time_ms: 30_000 }] as [string, Record<string, unknown>],
                ),
              );
            const running = view.last.filter((r) => r.details?.status === "running");
            if (running.length)
              return callAll(
                ...running.map(
                  (r) => ["write_stdin", { session_id: r.details.session_id, yield_time_ms: 30_000 }] as [string, Record<string, unknown>],
                ),
              );
            if (view.last.at(-1)?.toolName !== "bench_loop_delay") return call("bench_loop_delay", { reset: true });
            return say("done");
          },
          300_000,
        ),
      );
      const loop = measured.result.tools.find((t) => t.name === "bench_loop_delay")!.details as { p99: number; max: number };
      const floods = measured.result.tools.filter((t) => !t.name.startsWith("bench_"));
      sixteen.wall.push(performance.now() - t0);
      sixteen.peak.push(measured.peak - idle);
      sixteen.errors += floods.filter((t) => t.isError || (t.details?.exit_code !== undefined && t.details.exit_code !== 0)).length;
      sixteen.loopP99.push(loop.p99);
      sixteen.loopMax.push(loop.max);
    }

    // 4. Model-visible bytes of a progress-bar-heavy output.
    const progressExec = summary(await pi.run("progress exec", execUntilExit(PROGRESS)));
    const progressBash = summary(
      await pi.run("progress bash", (view) => (view.turn === 0 ? call("bash", { command: PROGRESS }) : say("done"))),
    );

    // 5. Hostile output: the stripper's throughput per adversarial shape, and the loop delay while a job prints each.
    const hostile = stripperThroughput();
    await hostileLoopDelay(pi, hostile);
    // 6. The host-death watchdog: a job's registration on the host, and the watchdog's start.
    const watchdog = await watchdogCost();
    // 7. Model-visible tokens per call over a fixed workload (its own Pi processes, after the timing work).
    const tokenRun = await tokenWorkload(host);
    const tokenRow = (format: string) => tokenRun.rows.find((row) => row.format === format);
    // 8. PTY screens: the emulator's parsing, snapshots, its cost at spawn against replaying the log, memory.
    const screen = await screenBenchmark();
    // 9. A dev server's "ready": calls and seconds with until_pattern, plain polls, and Pi's bash tool.
    const workflow = await workflowBenchmark(pi);

    const figures = {
      latency_true_ms: {
        exec_command: round(median(latency.exec)),
        bash_tool: round(median(latency.bash)),
        raw_spawn: round(median(latency.raw)),
      },
      latency_ratio_exec_over_bash: round(median(latency.exec) / median(latency.bash)),
      flood_200MB_ms: {
        exec_command: round(median(flood.exec)),
        bash_tool: round(median(flood.bash)),
        raw_shell: round(median(flood.raw)),
      },
      flood_ratio_exec_over_raw: round(median(flood.exec) / median(flood.raw)),
      flood_ratio_exec_over_bash: round(median(flood.exec) / median(flood.bash)),
      flood_peak_rss_over_idle_MiB: {
        exec_command: round(median(flood.execPeak) / MiB, 1),
        bash_tool: round(median(flood.bashPeak) / MiB, 1),
      },
      sixteen_floods_50MB: {
        wall_ms: round(median(sixteen.wall)),
        peak_rss_over_idle_MiB: round(median(sixteen.peak) / MiB, 1),
        errors: sixteen.errors,
        event_loop_p99_ms: round(median(sixteen.loopP99)),
        event_loop_max_ms: round(median(sixteen.loopMax)),
      },
      model_visible_bytes: {
        flood_exec_command: flood.execModelBytes,
        flood_bash_tool: flood.bashModelBytes,
        progress_exec_command: progressExec.modelBytes,
        progress_bash_tool: progressBash.modelBytes,
      },
      idle_rss_MiB: round(idle / MiB, 1),
      hostile_output: hostile,
      watchdog,
      tokens_o200k: Object.fromEntries(
        tokenRun.rows.map((row) => [
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
    };
    const worstShape = Math.min(...hostile.map((shape) => shape.mb_per_s));
    const goals = {
      "true ≤ 0.8× Pi's bash tool": figures.latency_ratio_exec_over_bash <= 0.8,
      "flood ≤ 1.3× the raw shell": figures.flood_ratio_exec_over_raw <= 1.3,
      "one flood ≤ idle + 40 MiB": figures.flood_peak_rss_over_idle_MiB.exec_command <= 40,
      "sixteen floods ≤ idle + 100 MiB": figures.sixteen_floods_50MB.peak_rss_over_idle_MiB <= 100,
      "sixteen floods: event-loop p99 < 50 ms": figures.sixteen_floods_50MB.event_loop_p99_ms < 50,
      [`hostile output: stripper ≥ ${THROUGHPUT_GOAL_MBPS} MB/s on the worst shape`]: worstShape >= THROUGHPUT_GOAL_MBPS,
      "watchdog registration < 1 ms per job (p99)": figures.watchdog.registration_us.p99 < 1_000,
      "median header ≤ 40 tokens (o200k)": (tokenRow("default")?.header.median ?? Infinity) <= 40,
      [`screen < ${SCREEN_MEMORY_GOAL_MB} MB per live PTY job`]:
        Math.max(screen.memory.emulator.per_unit_MB, screen.memory.pty_job.per_unit_MB, screen.memory.pty_job.rss_per_unit_MB) <
        SCREEN_MEMORY_GOAL_MB,
    };
    const machine = {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: cpus().length,
      node: process.version,
      pi: host.version,
      platform: `${process.platform} ${process.arch}`,
      date: new Date().toISOString(),
      runs: { latency_calls: LATENCY_CALLS, floods: FLOOD_RUNS },
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
      [
        "latency of `true` (median ms)",
        `exec_command ${figures.latency_true_ms.exec_command} · bash tool ${figures.latency_true_ms.bash_tool} · raw spawn ${figures.latency_true_ms.raw_spawn} → ${figures.latency_ratio_exec_over_bash}× bash`,
      ],
      [
        "200 MB flood (median ms)",
        `exec_command ${figures.flood_200MB_ms.exec_command} · bash tool ${figures.flood_200MB_ms.bash_tool} · raw shell ${figures.flood_200MB_ms.raw_shell} → ${figures.flood_ratio_exec_over_raw}× raw`,
      ],
      [
        "flood peak RSS over idle (MiB)",
        `exec_command ${figures.flood_peak_rss_over_idle_MiB.exec_command} · bash tool ${figures.flood_peak_rss_over_idle_MiB.bash_tool} (idle ${figures.idle_rss_MiB})`,
      ],
      [
        "16 × 50 MB floods",
        `wall ${figures.sixteen_floods_50MB.wall_ms} ms · peak RSS +${figures.sixteen_floods_50MB.peak_rss_over_idle_MiB} MiB · errors ${figures.sixteen_floods_50MB.errors} · loop p99 ${figures.sixteen_floods_50MB.event_loop_p99_ms} ms`,
      ],
      [
        "model-visible bytes, flood",
        `exec_command ${figures.model_visible_bytes.flood_exec_command} · bash tool ${figures.model_visible_bytes.flood_bash_tool}`,
      ],
      [
        "watchdog, per job registration (µs)",
        `mean ${figures.watchdog.registration_us.mean} · p99 ${figures.watchdog.registration_us.p99} · max ${figures.watchdog.registration_us.max} (${figures.watchdog.registration_us.count} registrations)`,
      ],
      [
        "watchdog start (median ms)",
        `spawn ${figures.watchdog.start_ms.spawn_median} · first job recorded ${figures.watchdog.start_ms.first_job_recorded_median} (${figures.watchdog.start_ms.starts} starts)`,
      ],
      [
        "model-visible bytes, progress bar",
        `exec_command ${figures.model_visible_bytes.progress_exec_command} · bash tool ${figures.model_visible_bytes.progress_bash_tool}`,
      ],
      ...workflowRows(workflow),
      ...hostileRows(hostile),
      ...screenRows(screen).filter(([label]) => !label.startsWith("goal:")),
      ...Object.entries(goals).map(([goal, met]) => [`goal: ${goal}`, met ? "met" : "MISSED"] as [string, string]),
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
    console.log(`\no200k tokens per call over the token workload\n${tokenRun.table}`);
    console.log(`\nwritten: tests/bench/results/latest.json (${machine.bench_seconds} s)`);
  } finally {
    await pi.close(60_000);
  }
}

await main();
