/**
 * Latency in the benchmark's second mode, the one a user's Pi is closest to: every block runs in a Pi
 * process of its own, in JSON mode, with the faux model's default streaming (pi-ai's small tokens, so
 * every streamed event passes Pi's handlers), 30 calls in one run after 3 warm-up calls, the tool
 * timed from its `tool_execution_start` to its `tool_execution_end` as the client reads them.
 *
 * The first mode (`latency.ts`) alternates both tools' blocks inside one long-lived RPC Pi: there each
 * tool's deferred work lands on its own next block, and the process is warm. Here nothing is shared:
 * a fresh Pi, a fresh runtime, its first warm shell, its first log directory. Both Pis load this
 * extension and keep Pi's bash tool (`--keep-builtin-bash`), so the only difference is the tool called.
 */
import type { PiEvent } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS, type PiHost } from "../helpers/hosts.ts";
import { launchPi } from "../helpers/pi-process.ts";
import { call, callAll, say } from "../helpers/scripted-model.ts";
import { PACE_MS, type Spread, spread } from "./latency.ts";

const TOOLS = ["exec_command", "bash"] as const;
type Tool = (typeof TOOLS)[number];
const argsOf = (tool: Tool) => (tool === "bash" ? { command: "true" } : { cmd: "true" });
const WARMUP = 3;
/** Calls timed per run, and messages of eight (after a first one), as the issue asks; `BENCH_FAST=1` runs fewer (see run.ts). */
export const ISOLATED_DEFAULTS = { calls: 30, eightRounds: 6 };
type Sizes = typeof ISOLATED_DEFAULTS;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

type Timed = PiEvent & { receivedAt: number; toolCallId: string; toolName: string };

/** Each call's client-side duration, in the order the calls started. */
function durations(records: PiEvent[], tool: Tool): number[] {
  const started = new Map<string, number>();
  const out: number[] = [];
  for (const record of records as Timed[]) {
    if (record.toolName !== tool) continue;
    if (record.type === "tool_execution_start") started.set(record.toolCallId, record.receivedAt);
    if (record.type === "tool_execution_end" && started.has(record.toolCallId))
      out.push(record.receivedAt - started.get(record.toolCallId)!);
  }
  return out;
}

/** First start to last end of each message's eight calls. */
function eightWalls(records: PiEvent[], tool: Tool): number[] {
  const walls: number[] = [];
  let batch: { first: number; ended: number } | undefined;
  for (const record of records as Timed[]) {
    if (record.toolName !== tool) continue;
    if (record.type === "tool_execution_start") batch ??= { first: record.receivedAt, ended: 0 };
    if (record.type === "tool_execution_end" && batch && ++batch.ended === 8) {
      walls.push(record.receivedAt - batch.first);
      batch = undefined;
    }
  }
  return walls;
}

type Shape = "back_to_back" | "paced" | "eight";

/** One fresh Pi in JSON mode running one shape of one tool; the per-call (or per-message) figure's median. */
export async function isolatedRun(
  host: PiHost,
  tool: Tool,
  shape: Shape,
  env: Record<string, string> = {},
  { calls, eightRounds }: Sizes = ISOLATED_DEFAULTS,
): Promise<number> {
  const eight = Array.from({ length: 8 }, () => [tool, argsOf(tool)] as [string, Record<string, unknown>]);
  const turns = shape === "eight" ? eightRounds + 1 : WARMUP + calls;
  const pi = await launchPi(host, "json", {
    args: [`isolated ${tool} ${shape}`, "--keep-builtin-bash"],
    env: { PIUE_FAUX_STREAMING: "default", ...env },
    ...(process.env.PIUE_TRACE ? { extensions: [EXTENSION_ENTRY, process.env.PIUE_TRACE] } : {}),
  });
  pi.model.delayMs = shape === "back_to_back" ? 0 : PACE_MS;
  pi.model.script = (view) => {
    if (view.turn >= turns) return say("done");
    return shape === "eight" ? callAll(...eight) : call(tool, argsOf(tool));
  };
  pi.child.stdin.end();
  const timer = setTimeout(() => pi.child.kill("SIGKILL"), 180_000);
  try {
    const { signal } = await pi.exited;
    if (signal === "SIGKILL") throw new Error(`isolated ${tool} ${shape} did not finish\n${pi.stderr()}`);
    if (pi.model.errors.length > 0) throw pi.model.errors[0];
    if (shape === "eight") return median(eightWalls(pi.records, tool).slice(1));
    const measured = durations(pi.records, tool).slice(WARMUP);
    if (measured.length !== calls) throw new Error(`isolated ${tool} ${shape}: ${measured.length} of ${calls} calls timed`);
    return median(measured);
  } finally {
    clearTimeout(timer);
    await pi.cleanup();
  }
}

export interface IsolatedFigures {
  back_to_back_ms: Record<Tool, Spread> & { ratio: Spread };
  paced_ms: Record<Tool, Spread> & { ratio: Spread; pace_ms: number };
  eight_in_one_message_ms: Record<Tool, Spread> & { ratio: Spread };
  runs: number;
  calls_per_run: number;
}

/** Every shape `runs` times, each run a fresh Pi per tool, the tools' order alternating run by run. */
export async function isolatedLatencyBenchmark(
  runs: number,
  host: PiHost = PI_HOSTS.at(-1)!,
  sizes: Sizes = ISOLATED_DEFAULTS,
): Promise<IsolatedFigures> {
  const shapes: Shape[] = ["back_to_back", "paced", "eight"];
  const figures = Object.fromEntries(
    shapes.map((shape) => [shape, { exec_command: [] as number[], bash: [] as number[], ratio: [] as number[] }]),
  );
  for (let run = 0; run < runs; run++) {
    const order: Tool[] = run % 2 === 0 ? ["exec_command", "bash"] : ["bash", "exec_command"];
    for (const shape of shapes) {
      const sample = figures[shape]!;
      for (const tool of order) sample[tool].push(await isolatedRun(host, tool, shape, {}, sizes));
      sample.ratio.push(sample.exec_command.at(-1)! / sample.bash.at(-1)!);
    }
  }
  const of = (shape: Shape) => {
    const sample = figures[shape]!;
    return { exec_command: spread(sample.exec_command), bash: spread(sample.bash), ratio: spread(sample.ratio) };
  };
  return {
    back_to_back_ms: of("back_to_back"),
    paced_ms: { ...of("paced"), pace_ms: PACE_MS },
    eight_in_one_message_ms: of("eight"),
    runs,
    calls_per_run: sizes.calls,
  };
}

const shown = (s: Spread) => `${s.median} (${s.min}–${s.max})`;

export function isolatedRows(figures: IsolatedFigures): [string, string][] {
  const { back_to_back_ms: b, paced_ms: p, eight_in_one_message_ms: e } = figures;
  const row = (f: Record<Tool, Spread> & { ratio: Spread }) =>
    `exec_command ${shown(f.exec_command)} · bash tool ${shown(f.bash)} → ${shown(f.ratio)}×`;
  return [
    ["isolated: `true` back to back, a fresh JSON-mode Pi per tool (ms)", row(b)],
    [`isolated: \`true\` at an agent's pace (${p.pace_ms} ms idle) (ms)`, row(p)],
    ["isolated: eight `true` in one message (ms, first start to last end)", row(e)],
  ];
}

export function isolatedGoals(figures: IsolatedFigures): Record<string, boolean> {
  return {
    "isolated: back to back ≤ 1.0× Pi's bash tool": figures.back_to_back_ms.ratio.median <= 1.0,
    "isolated: at an agent's pace ≤ 0.8× Pi's bash tool": figures.paced_ms.ratio.median <= 0.8,
    "isolated: eight in one message ≤ 0.8× eight bash calls": figures.eight_in_one_message_ms.ratio.median <= 0.8,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const figures = await isolatedLatencyBenchmark(runs);
  for (const [name, value] of isolatedRows(figures)) console.log(`${name}: ${value}`);
  console.log(JSON.stringify(isolatedGoals(figures)));
}
