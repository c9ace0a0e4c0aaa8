/**
 * Latency of `true` as a client of Pi sees it: from Pi's `tool_execution_start` event to its
 * `tool_execution_end`, both timed when the client reads them from Pi's event stream (the same
 * stream a JSON run prints), for exec_command and Pi's own bash tool, in three paces:
 * - back to back: the model answers at once, so each call starts right after the previous one ends;
 * - at an agent's pace: the model "thinks" 150 ms before each call, so Pi sits idle in between;
 * - eight calls in one message, from the first start to the last end, the messages at the agent's
 *   pace (a model sends the next message only after thinking; between them warm shells are refilled).
 * Each tool runs a block of calls of its own (its own deferred work lands on its own next call, as it
 * would for a user), the blocks alternating within one run, and a run is repeated: every figure is the
 * median of the runs' medians, with their minimum and maximum. The in-process microsecond durations
 * (the benchmark extension's, from Pi's handlers) are kept beside them as the breakdown.
 */
import type { PiEvent, Run } from "../helpers/events.ts";
import type { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, say } from "../helpers/scripted-model.ts";
import { preciseMs } from "./floods.ts";

export const PACE_MS = 150;
const TOOLS = ["exec_command", "bash"] as const;
type Tool = (typeof TOOLS)[number];
const argsOf = (tool: Tool) => (tool === "bash" ? { command: "true" } : { cmd: "true" });

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** A figure over runs: the median of each run's median, and the spread of those. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(perRun: number[]): Spread {
  return { median: round(median(perRun)), min: round(Math.min(...perRun)), max: round(Math.max(...perRun)) };
}

/** Client-side durations (ms) of a run's tool calls, by tool call id, from the events' arrival times. */
function eventDurations(run: Run): Map<string, { tool: string; ms: number }> {
  const starts = new Map<string, PiEvent>();
  const durations = new Map<string, { tool: string; ms: number }>();
  for (const event of run.events) {
    const at = (event as { receivedAt?: number }).receivedAt;
    if (at === undefined) continue;
    if (event.type === "tool_execution_start") starts.set(event.toolCallId, event);
    if (event.type === "tool_execution_end") {
      const start = starts.get(event.toolCallId) as (PiEvent & { receivedAt?: number }) | undefined;
      if (start?.receivedAt !== undefined) durations.set(event.toolCallId, { tool: event.toolName, ms: at - start.receivedAt });
    }
  }
  return durations;
}

/** One block: `calls` calls of `tool`, one per model turn (after `warmup` more). Client and in-process medians. */
async function block(pi: PiRpcHost, tool: Tool, calls: number, warmup: number) {
  const run = await pi.run(`latency ${tool}`, (view) => (view.turn < calls + warmup ? call(tool, argsOf(tool)) : say("done")), 120_000);
  const measured = run.tools.filter((t) => t.name === tool).slice(warmup);
  const client = eventDurations(run);
  const inside = await preciseMs(pi, measured);
  return { client: median(measured.map((t) => client.get(t.id)!.ms)), inside: median(inside) };
}

/** Eight calls of `tool` in one message, `rounds` times: first start to last end, client-side. */
async function parallelBlock(pi: PiRpcHost, tool: Tool, rounds: number) {
  const eight = Array.from({ length: 8 }, () => [tool, argsOf(tool)] as [string, Record<string, unknown>]);
  const run = await pi.run(`eight ${tool}`, (view) => (view.turn < rounds + 1 ? callAll(...eight) : say("done")), 120_000);
  const walls: number[] = [];
  let batch: { first: number; last: number; ended: number } | undefined;
  for (const event of run.events) {
    const at = (event as { receivedAt?: number }).receivedAt!;
    if (event.type === "tool_execution_start" && event.toolName === tool) {
      batch ??= { first: at, last: at, ended: 0 };
    }
    if (event.type === "tool_execution_end" && event.toolName === tool && batch) {
      batch.last = at;
      if (++batch.ended === 8) {
        walls.push(batch.last - batch.first);
        batch = undefined;
      }
    }
  }
  return median(walls.slice(1)); // the first message warms up
}

export interface LatencyFigures {
  back_to_back_ms: Record<Tool, Spread> & { ratio: Spread; inside_process: Record<Tool, Spread> };
  paced_ms: Record<Tool, Spread> & { ratio: Spread; inside_process: Record<Tool, Spread>; pace_ms: number };
  eight_in_one_message_ms: Record<Tool, Spread> & { ratio: Spread };
  runs: number;
  calls_per_block: number;
}

/** The three paces, `runs` times, each tool's blocks alternating; `pi` must have the bench extension and Pi's bash tool. */
export async function latencyBenchmark(pi: PiRpcHost, runs: number, calls = 40, warmup = 5, eightRounds = 6): Promise<LatencyFigures> {
  const sample = () => ({ exec_command: [] as number[], bash: [] as number[] });
  const b2b = { client: sample(), inside: sample(), ratio: [] as number[] };
  const paced = { client: sample(), inside: sample(), ratio: [] as number[] };
  const eight = { wall: sample(), ratio: [] as number[] };
  for (let run = 0; run < runs; run++) {
    // Alternate which tool goes first, so neither always follows the other's leftovers.
    const order: Tool[] = run % 2 === 0 ? ["exec_command", "bash"] : ["bash", "exec_command"];
    for (const tool of order) {
      const measured = await block(pi, tool, calls, warmup);
      b2b.client[tool].push(measured.client);
      b2b.inside[tool].push(measured.inside);
    }
    b2b.ratio.push(b2b.client.exec_command.at(-1)! / b2b.client.bash.at(-1)!);
    pi.modelDelayMs = PACE_MS;
    try {
      for (const tool of order) {
        const measured = await block(pi, tool, calls, 2);
        paced.client[tool].push(measured.client);
        paced.inside[tool].push(measured.inside);
      }
    } finally {
      pi.modelDelayMs = 0;
    }
    paced.ratio.push(paced.client.exec_command.at(-1)! / paced.client.bash.at(-1)!);
    pi.modelDelayMs = PACE_MS;
    try {
      for (const tool of order) eight.wall[tool].push(await parallelBlock(pi, tool, eightRounds));
    } finally {
      pi.modelDelayMs = 0;
    }
    eight.ratio.push(eight.wall.exec_command.at(-1)! / eight.wall.bash.at(-1)!);
  }
  const byTool = (values: Record<Tool, number[]>) => ({ exec_command: spread(values.exec_command), bash: spread(values.bash) });
  return {
    back_to_back_ms: { ...byTool(b2b.client), ratio: spread(b2b.ratio), inside_process: byTool(b2b.inside) },
    paced_ms: { ...byTool(paced.client), ratio: spread(paced.ratio), inside_process: byTool(paced.inside), pace_ms: PACE_MS },
    eight_in_one_message_ms: { ...byTool(eight.wall), ratio: spread(eight.ratio) },
    runs,
    calls_per_block: calls,
  };
}

const shown = (s: Spread) => `${s.median} (${s.min}–${s.max})`;

export function latencyRows(figures: LatencyFigures): [string, string][] {
  const { back_to_back_ms: b, paced_ms: p, eight_in_one_message_ms: e } = figures;
  return [
    [
      "`true` back to back, at Pi's events (ms)",
      `exec_command ${shown(b.exec_command)} · bash tool ${shown(b.bash)} → ${shown(b.ratio)}× (in process: ${b.inside_process.exec_command.median} / ${b.inside_process.bash.median})`,
    ],
    [
      `\`true\` at an agent's pace (${p.pace_ms} ms idle) (ms)`,
      `exec_command ${shown(p.exec_command)} · bash tool ${shown(p.bash)} → ${shown(p.ratio)}× (in process: ${p.inside_process.exec_command.median} / ${p.inside_process.bash.median})`,
    ],
    [
      `eight \`true\` in one message, messages ${PACE_MS} ms apart (ms, first start to last end)`,
      `exec_command ${shown(e.exec_command)} · bash tool ${shown(e.bash)} → ${shown(e.ratio)}×`,
    ],
  ];
}

export function latencyGoals(figures: LatencyFigures): Record<string, boolean> {
  return {
    "back to back ≤ 1.0× Pi's bash tool": figures.back_to_back_ms.ratio.median <= 1.0,
    "at an agent's pace ≤ 0.8× Pi's bash tool": figures.paced_ms.ratio.median <= 0.8,
    "eight in one message ≤ 0.8× eight bash calls": figures.eight_in_one_message_ms.ratio.median <= 0.8,
  };
}
