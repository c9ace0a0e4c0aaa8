/**
 * The hostile-output section of the benchmark. On each adversarial shape, in this process:
 * - the result's path, which the goal reads: what a tool call's output costs, a read retained as a
 *   job retains it (`HeadTailBuffer`, 1 MiB) and decoded by an `OutputDecoder`, which renders a large
 *   read at its ends only when a line start near its end allows it;
 * - for comparison, the stripper on the whole decoded text (`renderTerminalText`) and the whole
 *   read's path: UTF-8 decoding and the stripper on every retained byte, as a small read is rendered;
 * and the Pi host's event-loop maximum while a job prints the shape through `exec_command`, in
 * rounds: the first in a fresh host, the later ones in the same host after the earlier rounds' calls.
 * `npm run bench` includes it (one round, late in a long-lived host); `npm run bench:hostile` runs it
 * alone (`BENCH_HOSTILE_ROUNDS` rounds, 3 by default).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { HeadTailBuffer, omissionMarker, type RetainedOutput } from "../../src/core/output/head-tail-buffer.ts";
import { continuationPrefix, OutputDecoder } from "../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../src/core/output/terminal-text.ts";
import { HOSTILE_SHAPES } from "../helpers/hostile-output.ts";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, type ModelView, say } from "../helpers/scripted-model.ts";
import type { LoopDelay } from "./floods.ts";

const RUNS = 5;
/** Goal of issue 13, read on the result's path since issue 29: every shape goes through at 50 MB/s or more. */
export const THROUGHPUT_GOAL_MBPS = 50;
/** Goal of issue 29: the host's event loop is never held longer than this while a hostile job's calls run. */
export const LOOP_GOAL_MS = 100;
const ROUNDS = Math.max(1, Number(process.env.BENCH_HOSTILE_ROUNDS ?? 3));

export interface ShapeFigures {
  shape: string;
  /** Bytes the job prints. */
  bytes: number;
  /** Bytes a read retains of them (all of them up to 1 MiB): what the result's path decodes, and what its MB/s count. */
  retained_bytes: number;
  /** The result's path (the goal's figure): median over the runs, MB/s of the retained bytes (10^6 bytes per second). */
  mb_per_s: number;
  median_ms: number;
  /** Whether the result's path rendered the read at its ends only (else all of it). */
  decoded_in_part: boolean;
  /** The stripper on the whole decoded text, MB/s of the bytes printed. */
  whole_render_mb_per_s: number;
  /** The whole read's path: UTF-8 decoding and the stripper on every retained byte, MB/s of the retained bytes. */
  whole_path_mb_per_s: number;
  /** The Pi host's event-loop maximum while the job's calls ran: the largest over the rounds (present when measured). */
  loop_max_ms?: number;
  /** The same per round, the first in the freshest host. */
  loop_max_by_round_ms?: number[];
  /** The largest over the whole runs, the faux model's turns included (see the benchmark extension). */
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

/** The shape as a job's read retains it. */
function retainedOf(bytes: Buffer): RetainedOutput {
  const buffer = new HeadTailBuffer();
  buffer.push(bytes);
  return buffer.drain();
}

/** A retained read decoded and rendered whole, as the decoder does a small one. */
function wholeRead({ head, tail, omittedBytes }: RetainedOutput): string {
  const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  const gap = omittedBytes > 0 ? `${utf8.decode(head)}${omissionMarker(omittedBytes)}` : "";
  return renderTerminalText(gap + utf8.decode(omittedBytes > 0 ? tail.subarray(continuationPrefix(tail)) : Buffer.concat([head, tail])));
}

/** Throughput of the result's path, the whole stripper and the whole read's path on every shape, in this process. */
export function resultThroughput(): ShapeFigures[] {
  return HOSTILE_SHAPES.map((shape) => {
    const bytes = shape.bytes();
    const retained = retainedOf(bytes);
    const retainedBytes = retained.head.length + retained.tail.length;
    let inPart = false;
    const resultMs = timed(() => {
      inPart = new OutputDecoder().take(retained, true).elided !== undefined;
    });
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    const wholeMs = timed(() => renderTerminalText(text));
    const pathMs = timed(() => wholeRead(retained));
    const mbps = (size: number, elapsed: number) => round(size / 1e6 / (elapsed / 1000));
    return {
      shape: shape.name,
      bytes: bytes.length,
      retained_bytes: retainedBytes,
      mb_per_s: mbps(retainedBytes, resultMs),
      median_ms: round(resultMs, 2),
      decoded_in_part: inPart,
      whole_render_mb_per_s: mbps(bytes.length, wholeMs),
      whole_path_mb_per_s: mbps(retainedBytes, pathMs),
    };
  });
}

/** The name `run.ts` imports this part's throughput by. */
export const stripperThroughput = resultThroughput;

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
 * One round: for each shape, a job prints it (`head -c` from a file) in a Pi host with the loop-delay
 * probe, and the probe's maximum over that run is recorded (each round adds to the figures). `pi`
 * must have `loop-delay-extension.ts` loaded.
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
      const f = figures[i]!;
      f.loop_max_by_round_ms = [...(f.loop_max_by_round_ms ?? []), round(loop.whileTools.max)];
      f.loop_max_ms = Math.max(...f.loop_max_by_round_ms);
      f.loop_max_whole_run_ms = Math.max(f.loop_max_whole_run_ms ?? 0, round(loop.max));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function shapeRow(f: ShapeFigures): [string, string] {
  const loop =
    f.loop_max_by_round_ms === undefined
      ? ""
      : ` · loop max ${f.loop_max_by_round_ms.join(" / ")} ms while a job prints it${f.loop_max_by_round_ms.length > 1 ? " (by round)" : ""} (whole run ${f.loop_max_whole_run_ms} ms)`;
  return [
    `hostile: ${f.shape}`,
    `result ${f.mb_per_s} MB/s (${f.median_ms} ms, ${f.decoded_in_part ? "ends" : "whole"}) · whole render ${f.whole_render_mb_per_s} MB/s · whole read ${f.whole_path_mb_per_s} MB/s${loop}`,
  ];
}

/** The rows the benchmark prints for this section. */
export function hostileRows(figures: ShapeFigures[]): [string, string][] {
  const worst = figures.reduce((a, b) => (b.mb_per_s < a.mb_per_s ? b : a));
  const rows = [
    ...figures.map(shapeRow),
    [
      `goal: result ≥ ${THROUGHPUT_GOAL_MBPS} MB/s on every shape`,
      `${worst.mb_per_s >= THROUGHPUT_GOAL_MBPS ? "met" : "MISSED"} (worst: ${worst.shape}, ${worst.mb_per_s} MB/s)`,
    ] as [string, string],
  ];
  const looped = figures.filter((f) => f.loop_max_ms !== undefined);
  if (looped.length > 0) {
    const slowest = looped.reduce((a, b) => (b.loop_max_ms! > a.loop_max_ms! ? b : a));
    rows.push([
      `goal: loop max ≤ ${LOOP_GOAL_MS} ms while hostile calls run`,
      `${slowest.loop_max_ms! <= LOOP_GOAL_MS ? "met" : "MISSED"} (worst: ${slowest.shape}, ${slowest.loop_max_ms} ms)`,
    ]);
  }
  return rows;
}

async function main() {
  const figures = resultThroughput();
  const pi = await PiRpcHost.start(PI_HOSTS.at(-1)!, {
    extensions: [EXTENSION_ENTRY, join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts")],
  });
  try {
    for (let i = 0; i < ROUNDS; i++) await hostileLoopDelay(pi, figures);
  } finally {
    await pi.close(60_000);
  }
  const rows = hostileRows(figures);
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
