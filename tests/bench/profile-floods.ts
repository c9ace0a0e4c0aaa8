/**
 * `npm run bench:profile`: a V8 CPU profile of Pi (the newest 1.x, offline) while sixteen 50 MB floods
 * run through exec_command at once, to check that no synchronous step of ours blocks Pi's event loop
 * for long. The profile covers the floods only (taken from inside Pi by the benchmark extension).
 * A stretch of ours is a run of consecutive samples with this package's code on the stack and the
 * same entry frame (the frame under the root: a stream read, a timer, the microtask queue): one
 * synchronous step of ours lies within one such run (two steps of one kind back to back make one
 * run, so the figure is an upper bound). Prints the longest runs and where their time went, with
 * the host's event-loop delay over the same window. Those are wall-clock samples: on a busy machine
 * a stretch also counts time the thread waited for a core. So a round before it measures the main
 * thread's CPU time per step (every callback the loop runs, Pi's too; the benchmark extension's
 * async hooks). `PROFILE_FLOODS` sets how many floods (16), `PROFILE_BYTES` their size (50 MB),
 * `KEEP_PROFILE=1` keeps the .cpuprofile file.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXTENSION_ENTRY, PI_HOSTS, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, say } from "../helpers/scripted-model.ts";
import { floodErrors, loopDelay, sixteenFloods } from "./floods.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

type StepFigures =
  | { steps: number; p99_ms: number; p999_ms: number; max_ms: number; longest: { ms: number; type: string }[] }
  | { unavailable: true };

const FLOODS = Number(process.env.PROFILE_FLOODS) || 16;
const BYTES = Number(process.env.PROFILE_BYTES) || 50_000_000;
/** Steps at least this long are listed. */
const REPORT_MS = 10;

/** A frame of this package's own code (not Pi's, a library's, Node's or V8's). */
function isOurs(url: string): boolean {
  return url.includes(`${REPO_ROOT}/src/`);
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^file:\/\//, "").replace(`${REPO_ROOT}/`, "");
  return `${functionName || "(anonymous)"} ${file ? `${file.split("node_modules/").at(-1)}:${lineNumber + 1}` : ""}`.trim();
}

/** Stretches of consecutive samples with our code on the stack, longest first, each with its self time by frame. */
function stretchesOfOurs(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const oursOnStack = new Map<number, boolean>();
  const hasOurs = (id: number): boolean => {
    const known = oursOnStack.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const up = parent.get(id);
    const value = isOurs(node.callFrame.url) || (up !== undefined && hasOurs(up));
    oursOnStack.set(id, value);
    return value;
  };
  // The frame just under (root): a task's entry (a stream read, a timer, the microtask queue). A new
  // entry is a new task; the same entry twice in a row may still be two tasks (hence an upper bound).
  const entryOf = (id: number): number => {
    let at = id;
    for (let up = parent.get(at); up !== undefined && parent.get(up) !== undefined; up = parent.get(up)) at = up;
    return at;
  };
  const found: { ms: number; self: Map<string, number>; entry: number }[] = [];
  let current: (typeof found)[number] | undefined;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000; // the time until the next sample is this sample's
    if (!hasOurs(id)) {
      current = undefined;
      return;
    }
    const entry = entryOf(id);
    if (!current || current.entry !== entry) {
      current = { ms: 0, self: new Map(), entry };
      found.push(current);
    }
    current.ms += ms;
    const name = frameName(byId.get(id)!);
    current.self.set(name, (current.self.get(name) ?? 0) + ms);
  });
  return found.sort((a, b) => b.ms - a.ms);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "piue-profile-"));
  const flood = `head -c ${BYTES} /dev/zero | tr '\\0' x | fold -w 99`;
  const pi = await PiRpcHost.start(PI_HOSTS.at(-1)!, {
    extensions: [EXTENSION_ENTRY, join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts")],
  });
  const file = join(dir, "floods.cpuprofile");
  let loop: Awaited<ReturnType<typeof loopDelay>>;
  let steps: StepFigures | undefined;
  try {
    await pi.run("warm up", (view) => (view.turn === 0 ? call("exec_command", { cmd: "true" }) : say("ok")));
    // Thread CPU per step first, in a round of its own (its hooks slow every callback a little).
    await pi.run("step cpu", (view) => (view.turn === 0 ? call("bench_step_cpu", {}) : say("ok")));
    const measured = await pi.run("floods, step cpu", sixteenFloods("exec_command", flood, FLOODS), 300_000);
    const cpuRun = await pi.run("step cpu", (view) => (view.turn === 0 ? call("bench_step_cpu", { stop: true }) : say("ok")));
    steps = cpuRun.tools.find((tool) => tool.name === "bench_step_cpu")?.details as StepFigures;
    console.log(`${FLOODS} floods (step CPU measured): ${floodErrors(measured)} errors`);
    await pi.run("profile", (view) => (view.turn === 0 ? call("bench_profile", {}) : say("ok")));
    await loopDelay(pi);
    const t0 = performance.now();
    const run = await pi.run("floods", sixteenFloods("exec_command", flood, FLOODS), 300_000);
    console.log(`${FLOODS} floods of ${BYTES / 1e6} MB: ${Math.round(performance.now() - t0)} ms, ${floodErrors(run)} errors`);
    loop = await loopDelay(pi);
    await pi.run("profile", (view) => (view.turn === 0 ? call("bench_profile", { path: file }) : say("ok")));
  } finally {
    await pi.close(60_000);
  }
  console.log(
    `event-loop delay while the floods' calls ran: p99 ${loop.whileTools.p99.toFixed(1)} ms, max ${loop.whileTools.max.toFixed(1)} ms (less the waits for a core: p99 ${loop.whileTools.own_p99.toFixed(1)}, max ${loop.whileTools.own_max.toFixed(1)}; whole run: p99 ${loop.p99.toFixed(1)}, max ${loop.max.toFixed(1)})`,
  );
  if (!steps || "unavailable" in steps) console.log("thread CPU per step: unavailable on this Node");
  else {
    const longest = steps.longest.map((step) => `${step.ms.toFixed(2)} (${step.type})`).join(", ");
    console.log(
      `thread CPU per step (every step of the host, ours included): ${steps.steps} steps, p99 ${steps.p99_ms.toFixed(2)} ms, ` +
        `p99.9 ${steps.p999_ms.toFixed(2)} ms, max ${steps.max_ms.toFixed(2)} ms; longest: ${longest}`,
    );
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const busyMs = profile.samples.reduce((sum, _, i) => sum + (profile.timeDeltas[i + 1] ?? 0), 0) / 1000;
  const all = stretchesOfOurs(profile);
  const long = all.filter((stretch) => stretch.ms >= REPORT_MS);
  const oursMs = all.reduce((sum, stretch) => sum + stretch.ms, 0);
  console.log(
    `profile: ${Math.round(busyMs)} ms; our code on the stack ${Math.round(oursMs)} ms in ${all.length} stretches, ` +
      `the longest ${(all[0]?.ms ?? 0).toFixed(1)} ms; ${long.length} of ${REPORT_MS} ms or more`,
  );
  for (const stretch of long.slice(0, 8)) {
    const top = [...stretch.self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(`\n${stretch.ms.toFixed(1)} ms:`);
    for (const [name, ms] of top) console.log(`  ${ms.toFixed(1).padStart(6)} ms  ${name}`);
  }
  // KEEP_PROFILE=1 keeps the profile for a closer look (Chrome's DevTools open it).
  if (process.env.KEEP_PROFILE) console.log(`profile kept: ${file}`);
  else rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
