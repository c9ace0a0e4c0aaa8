/**
 * The 200 MB flood against a bare Node reader in both of the benchmark's modes (issue 40), alone with
 * `npm run bench:flood` (`BENCH_ROUNDS` rounds, default 5):
 * - one long-lived RPC Pi (the first mode, as `run.ts` runs it): `exec_command` of the flood and its
 *   polls until the exit, timed as the sum of Pi's tool durations;
 * - a fresh JSON-mode Pi per round with the faux model's default streaming (the second mode, as
 *   `isolated-latency.ts` runs it): the same calls, timed from each call's `tool_execution_start` to
 *   its `tool_execution_end` as the client reads them, summed.
 * Beside each round, in the same minute: a bare Node reader of the command in a session of its own
 * (every job's is; the goal's baseline) and `cat` (the machine's limit). The goal: ≤ 1.0× the reader,
 * median of the rounds, in each mode. The machine's load average is printed with each mode's figures.
 * In the first mode the CPU each side used is printed too (the Pi process's over the flood's run, its
 * model turns included; the benchmark process's over the reader's), a figure the machine's load moves
 * far less than the wall clock.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { currentShellHost, resolveShell } from "../../src/core/request/shell.ts";
import type { PiEvent } from "../helpers/events.ts";
import { EXTENSION_ENTRY, PI_HOSTS, type PiHost } from "../helpers/hosts.ts";
import { launchPi } from "../helpers/pi-process.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, say } from "../helpers/scripted-model.ts";
import { execUntilExit, nodeReaderMs, rawShellMs } from "./floods.ts";
import { type Spread, spread } from "./latency.ts";

export const FLOOD_200MB = "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 99";
export const FLOOD_READER_GOAL = 1.0;

export interface FloodModeFigures {
  /** Per round, ms: ours, the bare Node reader in its own session, `cat`. */
  exec_command_ms: Spread;
  node_reader_ms: Spread;
  cat_ms: Spread;
  /** Each round's ours over that round's reader. */
  ratio: Spread;
  rounds: number;
  /** CPU ms (user and system) per round, first mode only: the Pi process over the flood's run, the benchmark process over the reader's. */
  cpu_ms?: { exec_command: Spread; node_reader: Spread };
  /** The machine's 1-minute load average at the start and the end. */
  load: [number, number];
}

function figures(exec: number[], node: number[], cat: number[], load: [number, number]): FloodModeFigures {
  return {
    exec_command_ms: spread(exec),
    node_reader_ms: spread(node),
    cat_ms: spread(cat),
    ratio: spread(exec.map((ms, i) => ms / node[i]!)),
    rounds: exec.length,
    load,
  };
}

const loadNow = () => Math.round(loadavg()[0]! * 100) / 100;

/** CPU ms (user and system, all threads) process `pid` has used, from /proc (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms this process has used. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The first mode: one RPC Pi, `rounds` floods interleaved with the baselines. */
export async function rpcFloods(rounds: number, host: PiHost = PI_HOSTS.at(-1)!): Promise<FloodModeFigures> {
  const bash = resolveShell("bash", currentShellHost()).path;
  const load: [number, number] = [loadNow(), 0];
  const pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY], args: ["--keep-builtin-bash"] });
  const exec: number[] = [];
  const node: number[] = [];
  const cat: number[] = [];
  const cpu = { exec: [] as number[], node: [] as number[] };
  try {
    await pi.run("warm up", (view) => (view.turn < 2 ? call("exec_command", { cmd: "true" }) : say("ok")));
    for (let i = 0; i < rounds; i++) {
      let cpuBefore = processCpuMs(pi.pid);
      const run = await pi.run(`flood ${i}`, execUntilExit(FLOOD_200MB), 300_000);
      cpu.exec.push(processCpuMs(pi.pid) - cpuBefore);
      exec.push(run.tools.reduce((sum, tool) => sum + (tool.durationMs ?? 0), 0));
      cpuBefore = ownCpuMs();
      node.push(await nodeReaderMs(bash, FLOOD_200MB, true));
      cpu.node.push(ownCpuMs() - cpuBefore);
      cat.push(rawShellMs(bash, `${FLOOD_200MB} | cat > /dev/null`));
    }
  } finally {
    await pi.close(60_000);
  }
  load[1] = loadNow();
  return { ...figures(exec, node, cat, load), cpu_ms: { exec_command: spread(cpu.exec), node_reader: spread(cpu.node) } };
}

type Timed = PiEvent & { receivedAt: number; toolCallId: string; toolName: string };

/** One fresh JSON-mode Pi, the model streaming: the flood's calls, start to end as the client reads them, summed. */
async function isolatedFlood(host: PiHost): Promise<number> {
  const pi = await launchPi(host, "json", {
    args: ["isolated flood", "--keep-builtin-bash"],
    env: { PIUE_FAUX_STREAMING: "default" },
  });
  pi.model.script = execUntilExit(FLOOD_200MB);
  pi.child.stdin.end();
  const timer = setTimeout(() => pi.child.kill("SIGKILL"), 180_000);
  try {
    const { signal } = await pi.exited;
    if (signal === "SIGKILL") throw new Error(`isolated flood did not finish\n${pi.stderr()}`);
    if (pi.model.errors.length > 0) throw pi.model.errors[0];
    const started = new Map<string, number>();
    let total = 0;
    for (const record of pi.records as Timed[]) {
      if (record.type === "tool_execution_start") started.set(record.toolCallId, record.receivedAt);
      if (record.type === "tool_execution_end" && started.has(record.toolCallId))
        total += record.receivedAt - started.get(record.toolCallId)!;
    }
    if (started.size === 0) throw new Error("isolated flood: no call timed");
    return total;
  } finally {
    clearTimeout(timer);
    await pi.cleanup();
  }
}

/** The second mode: a fresh JSON-mode Pi per round, interleaved with the baselines. */
export async function isolatedFloods(rounds: number, host: PiHost = PI_HOSTS.at(-1)!): Promise<FloodModeFigures> {
  const bash = resolveShell("bash", currentShellHost()).path;
  const load: [number, number] = [loadNow(), 0];
  const exec: number[] = [];
  const node: number[] = [];
  const cat: number[] = [];
  for (let i = 0; i < rounds; i++) {
    exec.push(await isolatedFlood(host));
    node.push(await nodeReaderMs(bash, FLOOD_200MB, true));
    cat.push(rawShellMs(bash, `${FLOOD_200MB} | cat > /dev/null`));
  }
  load[1] = loadNow();
  return figures(exec, node, cat, load);
}

const shown = (s: Spread) => `${Math.round(s.median)} (${Math.round(s.min)}–${Math.round(s.max)})`;

export function floodModeRow(label: string, f: FloodModeFigures): [string, string] {
  return [
    `${label}: 200 MB flood, median ms (range) of ${f.rounds}`,
    `exec_command ${shown(f.exec_command_ms)} · Node reader in its own session ${shown(f.node_reader_ms)} · cat ${shown(f.cat_ms)} → ${f.ratio.median} (${f.ratio.min}–${f.ratio.max})× the reader${f.cpu_ms ? ` · CPU ms: Pi ${shown(f.cpu_ms.exec_command)}, reader ${shown(f.cpu_ms.node_reader)}` : ""} · load ${f.load[0]} → ${f.load[1]}`,
  ];
}

export function floodModeGoal(label: string, f: FloodModeFigures): Record<string, boolean> {
  return { [`${label}: 200 MB flood ≤ ${FLOOD_READER_GOAL}× a bare Node reader in its own session`]: f.ratio.median <= FLOOD_READER_GOAL };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rounds = Number(process.env.BENCH_ROUNDS) || 5;
  const modes = (process.env.FLOOD_MODES ?? "rpc,isolated").split(",");
  const results: [string, FloodModeFigures][] = [];
  if (modes.includes("rpc")) results.push(["one RPC Pi", await rpcFloods(rounds)]);
  if (modes.includes("isolated")) results.push(["isolated", await isolatedFloods(rounds)]);
  for (const [label, f] of results) {
    const [name, value] = floodModeRow(label, f);
    console.log(`${name}  ${value}`);
    for (const [goal, met] of Object.entries(floodModeGoal(label, f))) console.log(`goal: ${goal}  ${met ? "met" : "MISSED"}`);
  }
}
