/**
 * Parts of `npm run bench` about floods and start latency: the baselines that read the same pipe
 * (`cat`, and a bare Node reader that discards what it reads), the host's memory read from inside
 * Pi (after a GC for idle; peaks for resident, heap and outside the heap), the latency of `true`
 * through one Pi host, and sixteen parallel floods through either tool with the host's loop delay.
 */
import { spawn, spawnSync } from "node:child_process";
import type { Run, ToolRecord } from "../helpers/events.ts";
import type { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, type ModelStep, type ModelView, say } from "../helpers/scripted-model.ts";

export interface MemoryFigures {
  now: { rss: number; heap: number; outside: number };
  peak: { rss: number; heap: number; outside: number };
}

/** Wall time of `bash -c command` run from the benchmark process, in ms. */
export function rawShellMs(bash: string, command: string): number {
  const start = performance.now();
  const result = spawnSync(bash, ["-c", command], { stdio: "ignore" });
  if (result.status !== 0) throw new Error(`raw shell failed: ${command}`);
  return performance.now() - start;
}

/**
 * Wall time of a bare Node reader: the command's stdout read through 'data' events and dropped.
 * `ownSession`: the command leads a session of its own, as every job (and Pi's bash tool's command)
 * does; on Linux that also puts it in a scheduling group of its own (autogroup), apart from its reader.
 */
export function nodeReaderMs(bash: string, command: string, ownSession = false): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bash, ["-c", command], { stdio: ["ignore", "pipe", "ignore"], detached: ownSession });
    child.stdout.on("data", () => {});
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - start) : reject(new Error(`node reader: exit ${code}`))));
  });
}

/** The host's memory (MiB) from the benchmark extension; `gc` collects garbage first, `reset` starts a new peak. */
export async function hostMemory(pi: PiRpcHost, options: { gc?: boolean; reset?: boolean }): Promise<MemoryFigures> {
  const run = await pi.run("memory", (view) => (view.turn === 0 ? call("bench_memory", options) : say("ok")));
  return run.tools.find((tool) => tool.name === "bench_memory")!.details as MemoryFigures;
}

/** The host's event-loop delay in ms over a window: the whole of it, and while tools ran. */
export interface LoopDelay {
  p99: number;
  max: number;
  /**
   * Only while a tool executed: the faux model's turns between tool calls are the test harness's (see
   * the benchmark extension). `own_*`: each pause less the time Pi's main thread waited for a core in it.
   */
  whileTools: { p99: number; max: number; own_p99: number; own_max: number };
}

/** The host's event-loop delay since the last reset (and resets it). */
export async function loopDelay(pi: PiRpcHost): Promise<LoopDelay> {
  const run = await pi.run("loop delay", (view) => (view.turn === 0 ? call("bench_loop_delay", { reset: true }) : say("ok")));
  return run.tools.find((tool) => tool.name === "bench_loop_delay")!.details as LoopDelay;
}

/** Runs a command through exec_command, polling until it exits. */
export function execUntilExit(command: string): (view: ModelView) => ModelStep {
  return (view) => {
    const last = view.last.at(-1);
    if (!last) return call("exec_command", { cmd: command, yield_time_ms: 30_000 });
    if (last.details?.session_id !== undefined && last.details?.status === "running") {
      return call("write_stdin", { session_id: last.details.session_id, yield_time_ms: 30_000 });
    }
    return say("done");
  };
}

/** Durations of `tools` to the microsecond, measured inside the host by the benchmark extension (Pi's own rounded figure where it has none). */
export async function preciseMs(pi: PiRpcHost, tools: ToolRecord[]): Promise<number[]> {
  const run = await pi.run("tool durations", (view) =>
    view.turn === 0 ? call("bench_tool_ms", { ids: tools.map((t) => t.id) }) : say("ok"),
  );
  const ms = (run.tools.find((tool) => tool.name === "bench_tool_ms")?.details as { ms: (number | null)[] } | undefined)?.ms ?? [];
  return tools.map((tool, i) => ms[i] ?? tool.durationMs!);
}

/** Latency of `true`, interleaved: exec_command, the bash tool, and a raw spawn from the benchmark. */
export async function latencyOf(pi: PiRpcHost, bash: string, calls: number, warmup: number) {
  const raw: number[] = [];
  const run = await pi.run("latency", (view) => {
    const n = view.turn;
    if (n >= 2 * (calls + warmup)) return say("done");
    raw.push(rawShellMs(bash, "true"));
    return n % 2 === 0 ? call("exec_command", { cmd: "true" }) : call("bash", { command: "true" });
  });
  const tools = run.tools.slice(2 * warmup);
  const exec = tools.filter((t) => t.name === "exec_command");
  const bashCalls = tools.filter((t) => t.name === "bash");
  return { exec: await preciseMs(pi, exec), bash: await preciseMs(pi, bashCalls), raw: raw.slice(2 * warmup) };
}

type Calls = [string, Record<string, unknown>][];

/** Sixteen (or `count`) floods at once through `tool`, polled (exec_command) to completion. */
export function sixteenFloods(tool: "exec_command" | "bash", command: string, count = 16): (view: ModelView) => ModelStep {
  return (view) => {
    if (view.turn === 0) {
      const calls: Calls = Array.from({ length: count }, () =>
        tool === "bash" ? ["bash", { command }] : ["exec_command", { cmd: command, yield_time_ms: 30_000 }],
      );
      return callAll(...calls);
    }
    const running = view.last.filter((r) => r.details?.status === "running");
    if (running.length) {
      return callAll(...running.map((r) => ["write_stdin", { session_id: r.details.session_id, yield_time_ms: 30_000 }] as Calls[number]));
    }
    return say("done");
  };
}

/** Errors among a run's flood calls (a tool error, or a non-zero exit). */
export function floodErrors(run: Run): number {
  return run.tools.filter(
    (t) => !t.name.startsWith("bench_") && (t.isError || (t.details?.exit_code !== undefined && t.details.exit_code !== 0)),
  ).length;
}
