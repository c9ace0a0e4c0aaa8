/**
 * Benchmark-only extension: measures the host's event-loop delay from inside the Pi process, where
 * the jobs' output is handled, and hands the figures to the benchmark through a tool call.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

export default function loopDelay(pi: ExtensionAPI): void {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
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
}
