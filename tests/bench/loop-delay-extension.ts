/**
 * Benchmark-only extension: measures, from inside the Pi process where the jobs' output is handled,
 * the host's event-loop delay and its memory (resident, JS heap, and outside the heap: Buffers and
 * other native memory), and hands the figures to the benchmark through tool calls.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

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

export default function loopDelay(pi: ExtensionAPI): void {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let peak = memoryNow();
  // Sampled every 20 ms; unref'd so it never keeps Pi alive.
  setInterval(() => {
    const now = memoryNow();
    peak = { rss: Math.max(peak.rss, now.rss), heap: Math.max(peak.heap, now.heap), outside: Math.max(peak.outside, now.outside) };
  }, 20).unref();
  pi.registerTool({
    name: "bench_loop_delay",
    label: "bench_loop_delay",
    description: "Benchmark only: the event-loop delay since the last reset, in ms.",
    parameters: Type.Object({ reset: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    async execute(_id, params) {
      const figures = { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
      if (params.reset) histogram.reset();
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
