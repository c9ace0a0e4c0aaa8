/**
 * Benchmark-only extension: measures, from inside the Pi process where the jobs' output is handled,
 * the host's event-loop delay, its memory (resident, JS heap, and outside the heap: Buffers and
 * other native memory) and tool calls' durations to the microsecond (Pi's own `durationMs` is
 * rounded to whole milliseconds, a quarter of a 4 ms call), and hands the figures to the benchmark
 * through tool calls.
 */
import { createHook } from "node:async_hooks";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { createHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { schedstat } from "./loop-stalls.ts";

const MiB = 1024 * 1024;

/** A full garbage collection, without starting Pi with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

function memoryNow() {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed, outside: usage.external + usage.arrayBuffers };
}

/**
 * The main thread's CPU time per synchronous step: every callback the event loop runs (an I/O read, a
 * timer, an immediate, a tick, each promise reaction) is one step, from its async hook's `before` to
 * its `after` at the outermost level. Thread CPU time, not wall time: on a busy machine a step's wall
 * time also counts the time the thread waited for a core. It covers every step of the host, ours and
 * Pi's, so its maximum bounds ours. Needs `process.threadCpuUsage` (Node 22.19 and later here).
 */
class StepCpu {
  private readonly types = new Map<number, string>();
  private readonly steps: number[] = [];
  private readonly top: { ms: number; type: string }[] = [];
  private depth = 0;
  private startedAt = 0;
  private startedType = "";
  private readonly hook = createHook({
    init: (id, type) => {
      this.types.set(id, type);
    },
    destroy: (id) => {
      this.types.delete(id);
    },
    promiseResolve: () => {},
    before: (id) => {
      if (this.depth++ > 0) return;
      this.startedType = this.types.get(id) ?? "unknown";
      this.startedAt = cpuMs();
    },
    after: () => {
      if (--this.depth > 0) return;
      this.depth = 0;
      const ms = cpuMs() - this.startedAt;
      this.steps.push(ms);
      if (this.top.length < 5 || ms > this.top.at(-1)!.ms) {
        this.top.push({ ms, type: this.startedType });
        this.top.sort((a, b) => b.ms - a.ms).splice(5);
      }
    },
  });

  start(): void {
    this.hook.enable();
  }

  stop() {
    this.hook.disable();
    const sorted = [...this.steps].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return { steps: sorted.length, p99_ms: at(0.99), p999_ms: at(0.999), max_ms: sorted.at(-1) ?? 0, longest: this.top };
  }
}

/**
 * The event-loop delay only while a tool of the run executes (any tool but the benchmark's own).
 *
 * Why a second figure: between tool calls the test harness's faux model takes its turn, and it posts
 * the whole transcript to the test process from inside Pi on every turn. Late in a long benchmark
 * session a CPU profile of the host put 100–160 ms of one synchronous step there (JSON of the
 * transcript, the request's body), plus Pi's own handling of that turn: a loop maximum of 200–300 ms
 * whatever the job printed. A real provider serializes the context too, but that is the harness's and
 * Pi's, not the tools'. Sampled like `monitorEventLoopDelay` (the time between two ticks of a 10 ms
 * interval, so an idle loop reads about 10 ms), started when the first tool starts and stopped when
 * the last one ends; `monitorEventLoopDelay` itself cannot pause (re-enabled, its first sample would
 * span the pause).
 */
class ToolWindowDelay {
  private readonly histogram = createHistogram();
  /** The same gaps less the time the main thread waited for a core in each (what the loop itself held). */
  private readonly own = createHistogram();
  private readonly running = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private previous = 0;
  private previousWaiting = 0;

  started(toolCallId: string): void {
    this.running.add(toolCallId);
    if (this.timer) return;
    this.previous = performance.now();
    this.previousWaiting = waitingForCoreMs();
    this.timer = setInterval(() => this.tick(), 10);
    this.timer.unref();
  }

  ended(toolCallId: string): void {
    if (!this.running.delete(toolCallId) || this.running.size > 0 || !this.timer) return;
    this.tick();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** In ms, since the last reset (zeros when no tool ran); `own_*`: less the waits for a core (zeros off Linux). */
  figures(): { p99: number; max: number; own_p99: number; own_max: number } {
    if (this.histogram.count === 0) return { p99: 0, max: 0, own_p99: 0, own_max: 0 };
    const ms = (ns: number) => ns / 1e6;
    return {
      p99: ms(this.histogram.percentile(99)),
      max: ms(this.histogram.max),
      own_p99: ms(this.own.percentile(99)),
      own_max: ms(this.own.max),
    };
  }

  reset(): void {
    this.histogram.reset();
    this.own.reset();
  }

  private tick(): void {
    const now = performance.now();
    const waiting = waitingForCoreMs();
    const gap = now - this.previous;
    this.histogram.record(Math.max(1, Math.round(gap * 1e6)));
    this.own.record(Math.max(1, Math.round((gap - (waiting - this.previousWaiting)) * 1e6)));
    this.previous = now;
    this.previousWaiting = waiting;
  }
}

/** How long the main thread has waited for a core, ms (Linux's scheduler statistics; 0 elsewhere). */
function waitingForCoreMs(): number {
  return schedstat()[1] / 1e6;
}

function cpuMs(): number {
  const usage = (process as unknown as { threadCpuUsage: () => { user: number; system: number } }).threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

export default function loopDelay(pi: ExtensionAPI): void {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let peak = memoryNow();
  // Sampled every 20 ms; unref'd so it never keeps Pi alive.
  setInterval(() => {
    const now = memoryNow();
    peak = { rss: Math.max(peak.rss, now.rss), heap: Math.max(peak.heap, now.heap), outside: Math.max(peak.outside, now.outside) };
  }, 20).unref();
  // Every tool call's duration, from its start event to its end event as an extension sees them.
  const toolStarts = new Map<string, number>();
  const toolMs = new Map<string, number>();
  const whileTools = new ToolWindowDelay();
  pi.on("tool_execution_start", (event) => {
    toolStarts.set(event.toolCallId, performance.now());
    if (!event.toolName.startsWith("bench_")) whileTools.started(event.toolCallId);
  });
  pi.on("tool_execution_end", (event) => {
    whileTools.ended(event.toolCallId);
    const start = toolStarts.get(event.toolCallId);
    toolStarts.delete(event.toolCallId);
    if (start === undefined) return;
    if (toolMs.size >= 10_000) toolMs.clear();
    toolMs.set(event.toolCallId, performance.now() - start);
  });
  pi.registerTool({
    name: "bench_tool_ms",
    label: "bench_tool_ms",
    description: "Benchmark only: the durations in ms of the given tool calls (null where unknown), forgotten once read.",
    parameters: Type.Object({ ids: Type.Array(Type.String()) }, { additionalProperties: false }),
    async execute(_id, params) {
      const ms = params.ids.map((id) => toolMs.get(id) ?? null);
      for (const id of params.ids) toolMs.delete(id);
      return { content: [{ type: "text", text: JSON.stringify(ms) }], details: { ms } };
    },
  });
  pi.registerTool({
    name: "bench_loop_delay",
    label: "bench_loop_delay",
    description: "Benchmark only: the event-loop delay since the last reset, in ms: over the whole time, and while tools ran.",
    parameters: Type.Object({ reset: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    async execute(_id, params) {
      const figures = {
        p50: histogram.percentile(50) / 1e6,
        p99: histogram.percentile(99) / 1e6,
        max: histogram.max / 1e6,
        whileTools: whileTools.figures(),
      };
      if (params.reset) {
        histogram.reset();
        whileTools.reset();
      }
      return { content: [{ type: "text", text: JSON.stringify(figures) }], details: figures };
    },
  });
  let stepCpu: StepCpu | undefined;
  pi.registerTool({
    name: "bench_step_cpu",
    label: "bench_step_cpu",
    description: "Benchmark only: starts measuring the main thread's CPU time per synchronous step, or stops and reports it.",
    parameters: Type.Object({ stop: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    async execute(_id, params) {
      if (!params.stop) {
        if (typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage !== "function") {
          return { content: [{ type: "text", text: "unavailable" }], details: { unavailable: true } };
        }
        stepCpu = new StepCpu();
        stepCpu.start();
        return { content: [{ type: "text", text: "measuring" }], details: {} };
      }
      const figures = stepCpu?.stop() ?? { unavailable: true };
      stepCpu = undefined;
      return { content: [{ type: "text", text: JSON.stringify(figures) }], details: figures };
    },
  });
  // A CPU profile of the host over a window the benchmark chooses (the floods, not Pi's start-up).
  let profiler: Session | undefined;
  pi.registerTool({
    name: "bench_profile",
    label: "bench_profile",
    description: "Benchmark only: starts a CPU profile of this process, or stops it and writes it to path.",
    parameters: Type.Object({ path: Type.Optional(Type.String()) }, { additionalProperties: false }),
    async execute(_id, params) {
      if (!params.path) {
        profiler = new Session();
        profiler.connect();
        await profiler.post("Profiler.enable");
        await profiler.post("Profiler.setSamplingInterval", { interval: 500 });
        await profiler.post("Profiler.start");
        return { content: [{ type: "text", text: "profiling" }], details: {} };
      }
      const { profile } = await profiler!.post("Profiler.stop");
      profiler!.disconnect();
      profiler = undefined;
      writeFileSync(params.path, JSON.stringify(profile));
      return { content: [{ type: "text", text: params.path }], details: {} };
    },
  });
  pi.registerTool({
    name: "bench_memory",
    label: "bench_memory",
    description: "Benchmark only: memory in MiB now and at its peak since the last reset; gc first collects garbage.",
    parameters: Type.Object({ reset: Type.Optional(Type.Boolean()), gc: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    async execute(_id, params) {
      if (params.gc) collectGarbage();
      const now = memoryNow();
      const inMiB = (m: typeof now) => ({ rss: m.rss / MiB, heap: m.heap / MiB, outside: m.outside / MiB });
      const figures = { now: inMiB(now), peak: inMiB(peak) };
      if (params.reset) peak = now;
      return { content: [{ type: "text", text: JSON.stringify(figures) }], details: figures };
    },
  });
}
