/**
 * The hostile-output section of the benchmark: on each adversarial shape, the throughput of the
 * stripper (`renderTerminalText` on the decoded text) and of the whole output path (an OutputDecoder
 * turning the bytes into model text in one read, UTF-8 decoding included), and the Pi host's
 * event-loop delay while a job prints the shape through `exec_command`. `npm run bench` includes it;
 * `npm run bench:hostile` runs it alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { OutputDecoder } from "../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../src/core/output/terminal-text.ts";
import { HOSTILE_SHAPES } from "../helpers/hostile-output.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, type ModelView, say } from "../helpers/scripted-model.ts";
import type { LoopDelay } from "./floods.ts";

const RUNS = 9;
/** Goal of issue 13: the worst shape still goes through at 50 MB/s or more. */
export const THROUGHPUT_GOAL_MBPS = 50;

export interface ShapeFigures {
  shape: string;
  bytes: number;
  /** The stripper: median over the runs, MB/s of input bytes (10^6 bytes per second). */
  mb_per_s: number;
  median_ms: number;
  /** The whole output path, UTF-8 decoding included. */
  decoder_mb_per_s: number;
  /** The Pi host's event-loop delay while the job's calls ran (present when measured). */
  loop_max_ms?: number;
  /** The same over the whole run, the faux model's turns included (see the benchmark extension). */
  loop_max_whole_run_ms?: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Median time of `work` over the runs, in ms. */
function timed(work: () => void): number {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    work();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Throughput of the stripper and of the whole output path on every shape, in this process. */
export function stripperThroughput(): ShapeFigures[] {
  return HOSTILE_SHAPES.map((shape) => {
    const bytes = shape.bytes();
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    const ms = timed(() => renderTerminalText(text));
    const decoderMs = timed(() => new OutputDecoder().take({ head: bytes, tail: Buffer.alloc(0), omittedBytes: 0 }, true).text);
    const mbps = (elapsed: number) => round(bytes.length / 1e6 / (elapsed / 1000));
    return { shape: shape.name, bytes: bytes.length, mb_per_s: mbps(ms), median_ms: round(ms, 2), decoder_mb_per_s: mbps(decoderMs) };
  });
}

/** Polls `cmd` through exec_command until it exits. */
function untilExit(cmd: string): (view: ModelView) => ReturnType<typeof call> {
  return (view) => {
    const last = view.last.at(-1);
    if (!last) return call("exec_command", { cmd, yield_time_ms: 30_000 });
    if (last.details?.status === "running") return call("write_stdin", { session_id: last.details.session_id, yield_time_ms: 30_000 });
    return say("done");
  };
}

/**
 * For each shape, a job prints it (`head -c` from a file) in a Pi host with the loop-delay probe,
 * and the probe's maximum over that run is recorded. `pi` must have `loop-delay-extension.ts` loaded.
 */
export async function hostileLoopDelay(pi: PiRpcHost, figures: ShapeFigures[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "piue-bench-hostile-"));
  try {
    for (const [i, shape] of HOSTILE_SHAPES.entries()) {
      const file = join(dir, `shape-${i}.bin`);
      const bytes = shape.bytes();
      writeFileSync(file, bytes);
      await pi.run("reset loop delay", (view) => (view.turn === 0 ? call("bench_loop_delay", { reset: true }) : say("ok")));
      await pi.run(`hostile ${shape.name}`, untilExit(`head -c ${bytes.length} '${file}'`), 120_000);
      const probe = await pi.run("loop delay", (view) => (view.turn === 0 ? call("bench_loop_delay", {}) : say("ok")));
      const loop = probe.tools.find((tool) => tool.name === "bench_loop_delay")!.details as LoopDelay;
      figures[i]!.loop_max_ms = round(loop.whileTools.max);
      figures[i]!.loop_max_whole_run_ms = round(loop.max);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows the benchmark prints for this section. */
export function hostileRows(figures: ShapeFigures[]): [string, string][] {
  const worst = figures.reduce((a, b) => (b.mb_per_s < a.mb_per_s ? b : a));
  return [
    ...figures.map(
      (f) =>
        [
          `hostile: ${f.shape}`,
          `stripper ${f.mb_per_s} MB/s (${f.median_ms} ms) · with decoding ${f.decoder_mb_per_s} MB/s${f.loop_max_ms !== undefined ? ` · loop max ${f.loop_max_ms} ms while a job prints it (whole run ${f.loop_max_whole_run_ms} ms)` : ""}`,
        ] as [string, string],
    ),
    [
      `goal: stripper ≥ ${THROUGHPUT_GOAL_MBPS} MB/s on the worst shape`,
      `${worst.mb_per_s >= THROUGHPUT_GOAL_MBPS ? "met" : "MISSED"} (${worst.shape}: ${worst.mb_per_s} MB/s)`,
    ],
  ];
}

async function main() {
  const figures = stripperThroughput();
  const pi = await PiRpcHost.start(PI_HOSTS.at(-1)!, {
    extensions: [EXTENSION_ENTRY, join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts")],
  });
  try {
    await hostileLoopDelay(pi, figures);
  } finally {
    await pi.close(60_000);
  }
  const rows = hostileRows(figures);
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
