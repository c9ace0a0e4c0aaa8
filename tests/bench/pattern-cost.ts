/**
 * Part of `npm run bench` (and `npm run bench:patterns` alone): patterns cannot stall Pi (issue 36).
 * - Refusals: the two patterns of the issue (`(?i)error.{0,300}timeout`, `a[ab]{490}[cd]`) are refused
 *   at arming; the row says so.
 * - Throughput of every benchmark pattern that is accepted — a plain alternation, `.*` between two
 *   words, and the widest counted repeats accepted (`.{0,n}`, `[ab]{n}` at `MAX_COUNTED_REPEAT`) — on each shape: the flood
 *   of the other rows (`x` × 99 a line), word-dense log lines where `error` is frequent and `timeout`
 *   never comes, and random a/b lines. Measured through a `PatternWatch` (the `wake_on_pattern` path,
 *   its prefilter included) fed 64 KiB reads, in this process; MB/s of the bytes fed, DFA states built
 *   included, per second of this process's CPU time (goal ≥ 20 MB/s: on a shared machine the wall
 *   clock counts the time others' processes ran; the wall figure is printed beside it).
 * - The event loop while a job floods 200 MB with each accepted pattern armed and nobody reads it:
 *   its maximum delay, in a runtime in this process (goal ≤ 100 ms), on word-dense lines, and on
 *   random a/b lines for the `[ab]` pattern; and the same flood with no pattern, for comparison. Beside
 *   it, from the main thread's scheduler statistics (loop-stalls.ts): how much of the longest pause the
 *   thread waited for a core, and the longest pause less that wait (the loop's own part).
 * - MB/s go through the path a job pays (job.ts): the wake's watch and the reads' matcher
 *   (read-matches.ts), which tests every line whoever holds the job, on one shared budget.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { compileUntilPattern } from "../../src/core/patterns/line-pattern.ts";
import { PatternBudget } from "../../src/core/patterns/pattern-budget.ts";
import { MAX_COUNTED_REPEAT } from "../../src/core/patterns/pattern-cost.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { PatternWatch } from "../../src/core/wake-watch/pattern-watch.ts";
import { ReadMatches } from "../../src/core/wake-watch/read-matches.ts";
import { type LoopStalls, sampleStalls } from "./loop-stalls.ts";

export const PATTERN_MBPS_GOAL = 20;
export const PATTERN_LOOP_GOAL_MS = 100;
const REFUSED = ["(?i)error.{0,300}timeout", "a[ab]{490}[cd]"];
const ACCEPTED = [
  "(?i)error|fatal|panic",
  "(?i)error.*timeout",
  `(?i)error.{0,${MAX_COUNTED_REPEAT}}timeout`,
  `a[ab]{${MAX_COUNTED_REPEAT}}[cd]`,
];
const SHAPE_BYTES = 16 * 1024 * 1024;
const READ = 64 * 1024;
const WORDS =
  "the server said error while waiting for a reply on the socket then retried the request and got another ERROR from upstream".split(" ");

/** Lines of `width` characters from `next()` pieces, `bytes` in all. */
function lines(bytes: number, width: number, next: () => string): Buffer {
  const out: string[] = [];
  let total = 0;
  while (total < bytes) {
    let line = "";
    while (line.length < width) line += next();
    line = line.slice(0, width);
    out.push(line);
    total += width + 1;
  }
  return Buffer.from(`${out.join("\n")}\n`);
}

function shapes(): Record<string, Buffer> {
  let seed = 12_345;
  const random = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  return {
    flood: lines(SHAPE_BYTES, 99, () => "x"),
    word_dense: lines(SHAPE_BYTES, 99, () => `${WORDS[Math.floor(random() * WORDS.length)]} `),
    random_ab: lines(SHAPE_BYTES, 99, () => (random() < 0.5 ? "a" : "b")),
  };
}

export interface PatternCostFigures {
  refused: Record<string, string>;
  /** Per pattern, per shape: MB per CPU second through a fresh watch (its DFA built from nothing). */
  mb_per_s: Record<string, Record<string, number>>;
  /** The same per second of the wall clock. */
  wall_mb_per_s: Record<string, Record<string, number>>;
  /** Per pattern (and shape): the event loop's maximum delay during an unread 200 MB flood, ms. */
  flood_loop_max_ms: Record<string, number>;
  /** The same floods: the longest pause, the part of it the main thread waited for a core, and the longest pause less that wait. */
  flood_stalls: Record<string, LoopStalls>;
  /** Any pattern suspended during the throughput runs (none expected: accepted patterns are fast). */
  suspended: string[];
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** MB per CPU second and per wall second of `pattern` over `bytes`. */
function throughput(pattern: string, bytes: Buffer, suspended: string[]): { cpu: number; wall: number } {
  const compiled = compileUntilPattern(pattern);
  const budget = new PatternBudget(() => performance.now());
  // As a job tests a chunk: both testers on one budget (job.ts).
  const watch = new PatternWatch(compiled, { midLine: false, onHit: () => {}, onSuspend: () => suspended.push(pattern), budget });
  const reads = new ReadMatches(compiled, budget);
  let lines = 0;
  const started = performance.now();
  const cpuStarted = cpuMs();
  for (let at = 0; at < bytes.length; at += READ) {
    const chunk = bytes.subarray(at, at + READ);
    reads.feed(chunk, lines);
    watch.feed(chunk);
    lines += 650; // the read's tally, about the lines of a 64 KiB read of 100-byte lines (numbers only)
    if (lines > 100_000) {
      reads.take();
      lines = 0;
    }
  }
  const ms = performance.now() - started;
  const cpu = cpuMs() - cpuStarted;
  watch.stop();
  return { cpu: round(bytes.length / 1e6 / (cpu / 1000)), wall: round(bytes.length / 1e6 / (ms / 1000)) };
}

/** The loop's maximum delay while `cmd` floods with `pattern` armed and nobody reads it. */
async function floodLoopMax(runtime: ExecRuntime, cmd: string, pattern: string | undefined): Promise<[number, LoopStalls]> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const stalls = sampleStalls();
  const request = { cmd, yield_time_ms: 250, ...(pattern ? { wake_on_pattern: pattern } : {}) };
  const report = await runtime.exec(prepareExec(request, process.cwd(), process.env));
  const job = runtime.jobs().find((candidate) => candidate.id === report.job.jobId);
  if (job) await new Promise<void>((resolve) => job.onExit(resolve));
  delay.disable();
  const stalled = stalls.stop();
  if (job) await runtime.interact({ jobId: job.id, window: { ms: 250 } });
  return [round(delay.max / 1e6), stalled];
}

/** `floods`: false leaves out the 200 MB floods (a fast run: the throughput and the refusals only). */
export async function patternCostBenchmark(floods = true): Promise<PatternCostFigures> {
  const refused: Record<string, string> = {};
  for (const pattern of REFUSED) {
    try {
      compileUntilPattern(pattern);
      refused[pattern] = "ACCEPTED";
    } catch (error) {
      refused[pattern] = (error as Error).message.split(":")[0]!;
    }
  }
  const suspended: string[] = [];
  const mb_per_s: PatternCostFigures["mb_per_s"] = {};
  const wall_mb_per_s: PatternCostFigures["wall_mb_per_s"] = {};
  const data = shapes();
  for (const pattern of ACCEPTED) {
    mb_per_s[pattern] = {};
    wall_mb_per_s[pattern] = {};
    for (const [shape, bytes] of Object.entries(data)) {
      const { cpu, wall } = throughput(pattern, bytes, suspended);
      mb_per_s[pattern]![shape] = cpu;
      wall_mb_per_s[pattern]![shape] = wall;
    }
  }
  const words = `yes '${WORDS.join(" ")}' | head -c 200000000`;
  const ab = "head -c 200000000 /dev/urandom | tr '\\000-\\377' '[a*128][b*128]' | fold -w 99";
  const runtime = new ExecRuntime();
  const flood_loop_max_ms: Record<string, number> = {};
  const flood_stalls: Record<string, LoopStalls> = {};
  const runs: [string, string, string | undefined][] = floods
    ? [
        ["no pattern on word_dense", words, undefined],
        ...ACCEPTED.map((pattern) => [`${pattern} on word_dense`, words, pattern] as [string, string, string]),
        [`a[ab]{${MAX_COUNTED_REPEAT}}[cd] on random_ab`, ab, `a[ab]{${MAX_COUNTED_REPEAT}}[cd]`],
      ]
    : [];
  try {
    for (const [what, cmd, pattern] of runs) [flood_loop_max_ms[what], flood_stalls[what]] = await floodLoopMax(runtime, cmd, pattern);
  } finally {
    await runtime.shutdown();
  }
  return { refused, mb_per_s, wall_mb_per_s, flood_loop_max_ms, flood_stalls, suspended };
}

/** Whether the 200 MB floods ran (a fast run leaves them out). */
const flooded = (figures: PatternCostFigures) => Object.keys(figures.flood_loop_max_ms).length > 0;

export function patternCostRows(figures: PatternCostFigures): [string, string][] {
  return [
    [
      "patterns refused at arming",
      Object.entries(figures.refused)
        .map(([pattern, how]) => `/${pattern}/ ${how}`)
        .join(" · "),
    ],
    ...Object.entries(figures.mb_per_s).map(
      ([pattern, shapes]) =>
        [
          `pattern /${pattern}/ (MB per CPU s; wall)`,
          Object.entries(shapes)
            .map(([shape, mbps]) => `${shape} ${mbps} (${figures.wall_mb_per_s[pattern]?.[shape]})`)
            .join(" · "),
        ] as [string, string],
    ),
    [
      "unread 200 MB flood with a pattern armed: loop max (ms)",
      `${
        flooded(figures)
          ? Object.entries(figures.flood_loop_max_ms)
              .map(([what, ms]) => `${what} ${ms}`)
              .join(" · ")
          : "not run in a fast run"
      }${figures.suspended.length ? ` · suspended: ${figures.suspended.join(", ")}` : ""}`,
    ],
    ...(flooded(figures)
      ? [
          [
            "the same floods: longest pause (waiting for a core in it) · longest less the wait (ms)",
            Object.entries(figures.flood_stalls)
              .map(([what, s]) => `${what} ${s.longest_ms} (${s.longest_waiting_ms}) · ${s.longest_less_waiting_ms}`)
              .join(" · "),
          ] as [string, string],
        ]
      : []),
  ];
}

export function patternCostGoals(figures: PatternCostFigures): Record<string, boolean> {
  const worst = Math.min(...Object.values(figures.mb_per_s).flatMap((shapes) => Object.values(shapes)));
  return {
    "the issue's two costly patterns are refused at arming": Object.values(figures.refused).every((how) => how !== "ACCEPTED"),
    [`every accepted pattern ≥ ${PATTERN_MBPS_GOAL} MB/s on every shape, none suspended`]:
      worst >= PATTERN_MBPS_GOAL && figures.suspended.length === 0,
    ...(flooded(figures)
      ? {
          [`unread 200 MB flood with any accepted pattern: event-loop max ≤ ${PATTERN_LOOP_GOAL_MS} ms`]: Object.entries(
            figures.flood_loop_max_ms,
          ).every(([what, ms]) => what.startsWith("no pattern") || ms <= PATTERN_LOOP_GOAL_MS),
        }
      : {}),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const figures = await patternCostBenchmark();
  for (const [label, value] of patternCostRows(figures)) console.log(`${label}  ${value}`);
  for (const [goal, met] of Object.entries(patternCostGoals(figures))) console.log(`goal: ${goal}  ${met ? "met" : "MISSED"}`);
}
