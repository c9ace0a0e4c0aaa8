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
/**
 * Calls timed per run, and messages of eight (after a first one), as the issue asks, each shape in a
 * fresh Pi. `BENCH_FAST=1` (see run.ts) times fewer and runs the three shapes in one fresh Pi per
 * tool and run: on a busy machine a Pi takes seconds to start, and 18 of them were most of its time.
 */
export const ISOLATED_DEFAULTS = { calls: 30, eightRounds: 6, shapesPerPi: 1 };
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

/** Calls a shape makes in a run: single calls after the warm-up, or messages of eight after a first one. */
function callsOf(shape: Shape, { calls, eightRounds }: Sizes): number {
  return shape === "eight" ? (eightRounds + 1) * 8 : WARMUP + calls;
}

/**
 * One fresh Pi in JSON mode running `shapes` of one tool, one after the other (one shape per Pi in
 * the full run); each shape's per-call (or per-message) figure's median.
 */
export async function isolatedRun(
  host: PiHost,
  tool: Tool,
  shapes: readonly Shape[],
  env: Record<string, string> = {},
  sizes: Sizes = ISOLATED_DEFAULTS,
): Promise<Partial<Record<Shape, number>>> {
  const eight = Array.from({ length: 8 }, () => [tool, argsOf(tool)] as [string, Record<string, unknown>]);
  const segments = shapes.map((shape) => ({ shape, turns: shape === "eight" ? sizes.eightRounds + 1 : WARMUP + sizes.calls }));
  const pi = await launchPi(host, "json", {
    args: [`isolated ${tool} ${shapes.join(" ")}`, "--keep-builtin-bash"],
    env: { PIUE_FAUX_STREAMING: "default", ...env },
    ...(process.env.PIUE_TRACE ? { extensions: [EXTENSION_ENTRY, process.env.PIUE_TRACE] } : {}),
  });
  pi.model.script = (view) => {
    // The segment this turn falls in: each shape's turns follow the previous shape's.
    const ends = segments.map((_, i) => segments.slice(0, i + 1).reduce((sum, { turns }) => sum + turns, 0));
    const segment = segments[ends.findIndex((end) => view.turn < end)];
    pi.model.delayMs = segment?.shape === "back_to_back" ? 0 : PACE_MS;
    if (!segment) return say("done");
    return segment.shape === "eight" ? callAll(...eight) : call(tool, argsOf(tool));
  };
  pi.child.stdin.end();
  const timer = setTimeout(() => pi.child.kill("SIGKILL"), 300_000);
  try {
    const { signal } = await pi.exited;
    if (signal === "SIGKILL") throw new Error(`isolated ${tool} ${shapes} did not finish\n${pi.stderr()}`);
    if (pi.model.errors.length > 0) throw pi.model.errors[0];
    // Each shape's calls, by the order the calls started.
    const ids = (pi.records as Timed[]).filter((r) => r.type === "tool_execution_start" && r.toolName === tool).map((r) => r.toolCallId);
    const figures: Partial<Record<Shape, number>> = {};
    let from = 0;
    for (const shape of shapes) {
      const mine = new Set(ids.slice(from, from + callsOf(shape, sizes)));
      from += mine.size;
      const records = (pi.records as Timed[]).filter((r) => mine.has(r.toolCallId));
      if (shape === "eight") {
        figures.eight = median(eightWalls(records, tool).slice(1));
        continue;
      }
      const measured = durations(records, tool).slice(WARMUP);
      if (measured.length !== sizes.calls) throw new Error(`isolated ${tool} ${shape}: ${measured.length} of ${sizes.calls} calls timed`);
      figures[shape] = median(measured);
    }
    return figures;
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
    const groups = sizes.shapesPerPi > 1 ? [shapes] : shapes.map((shape) => [shape]);
    for (const group of groups) {
      const measured = { exec_command: {}, bash: {} } as Record<Tool, Partial<Record<Shape, number>>>;
      for (const tool of order) measured[tool] = await isolatedRun(host, tool, group, {}, sizes);
      for (const shape of group) {
        const sample = figures[shape]!;
        for (const tool of TOOLS) sample[tool].push(measured[tool][shape]!);
        sample.ratio.push(sample.exec_command.at(-1)! / sample.bash.at(-1)!);
      }
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
