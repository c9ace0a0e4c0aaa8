/**
 * A long session's soak: many calls of a mixed workload in one Pi host, with a `/reload` now and then,
 * measuring what it leaves: the host's heap after a full GC (against the same workload through Pi's
 * own bash tool in a host of its own: the control, whose growth is Pi's transcript), its descriptors,
 * processes left running, and whether any exit was reported twice. `npm run bench` runs the long one;
 * tests/e2e/soak.test.ts a short one.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ToolRecord } from "../helpers/events.ts";
import { FDS_PER_WARM_SHELL, heldBy } from "../helpers/held-by.ts";
import { EXTENSION_ENTRY, type PiHost, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { call, callAll, type ModelStep, type ModelView, say, steps } from "../helpers/scripted-model.ts";
import { hostMemory } from "./floods.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");
const BENCH = join(REPO_ROOT, "tests", "bench", "loop-delay-extension.ts");
/** Calls in one model message: the faux model's turn posts the whole transcript, so fewer turns keep it quick. */
const PER_MESSAGE = 5;

type Calls = [string, Record<string, unknown>][];

/** Message `n` of the workload: short commands, some output, a PTY job, a job left running and read later, a listing. */
function execMessage(n: number, running: number[]): Calls {
  const calls: Calls = [
    ["exec_command", { cmd: `echo soak-${n}` }],
    ["exec_command", { cmd: "seq 1 500" }],
    ["exec_command", { cmd: `printf 'tty %s\\n' ${n}`, tty: true }],
  ];
  if (n % 4 === 0) calls.push(["exec_command", { cmd: "sleep 0.3; echo late", yield_time_ms: 250, on_exit: "wake" }]);
  else if (running.length > 0) calls.push(["write_stdin", { session_id: running.shift()!, yield_time_ms: 1_000 }]);
  else calls.push(["exec_command", { cmd: "true" }]);
  calls.push(n % 10 === 0 ? ["list_sessions", {}] : ["exec_command", { cmd: "ls -la" }]);
  return calls.slice(0, PER_MESSAGE);
}

/** The control: the same commands through Pi's bash tool. */
function bashMessage(n: number): Calls {
  return [`echo soak-${n}`, "seq 1 500", `printf 'tty %s\\n' ${n}`, n % 4 === 0 ? "sleep 0.3; echo late" : "true", "ls -la"].map(
    (command) => ["bash", { command }] as Calls[number],
  );
}

export interface SoakFigures {
  tool: "exec_command" | "bash";
  calls: number;
  reloads: number;
  seconds: number;
  heap_after_gc_MiB: { before: number; after: number; growth: number };
  rss_after_gc_MiB: { before: number; after: number; growth: number };
  /** Pi's descriptors, the idle warm shells' own left out of `after` (their number follows the calls run at once). */
  descriptors: { before: number; after: number };
  warm_shells: { before: number; after: number };
  /** Processes under Pi's process besides its watchdog and warm shell when the run ends. */
  leftover_processes: number;
  /** Session ids whose exit more than one result reported. */
  exits_reported_twice: number[];
}

/** Runs `calls` calls (rounded to whole messages) through `tool`, a `/reload` every `reloadEvery` messages. */
export async function soak(host: PiHost, tool: "exec_command" | "bash", calls: number, reloadEvery: number): Promise<SoakFigures> {
  const pi = await PiRpcHost.start(host, {
    extensions: [EXTENSION_ENTRY, PROBE, BENCH],
    ...(tool === "bash" ? { args: ["--keep-builtin-bash"] } : {}),
  });
  const started = performance.now();
  try {
    await pi.run("warm up", steps(call(tool, tool === "bash" ? { command: "true" } : { cmd: "true" }), say("ok")));
    const before = (await hostMemory(pi, { gc: true })).now;
    const held = heldBy(pi.pid);

    const messages = Math.ceil(calls / PER_MESSAGE);
    const running: number[] = [];
    const exits = new Map<number, number>();
    let reloads = 0;
    let nextReload = reloadEvery;
    const record = (tools: ToolRecord[]) => {
      for (const result of tools) {
        const id = result.details?.session_id ?? result.args.session_id;
        if (typeof result.details?.session_id === "number" && result.details.status === "running" && result.name === "exec_command")
          running.push(result.details.session_id);
        if (typeof id === "number" && result.details?.exit_code !== undefined) exits.set(id, (exits.get(id) ?? 0) + 1);
      }
    };
    for (let done = 0; done < messages; ) {
      const batch = Math.min(10, messages - done, reloadEvery > 0 ? nextReload - done : messages);
      const from = done;
      await pi.waitIdle(); // a wake's turn may be running
      const run = await pi.run(
        `soak ${from}`,
        (view: ModelView): ModelStep =>
          view.turn < batch
            ? callAll(...(tool === "bash" ? bashMessage(from + view.turn) : execMessage(from + view.turn, running)))
            : say("ok"),
        300_000,
      );
      record(run.tools);
      done += batch;
      if (reloadEvery > 0 && done === nextReload && done < messages) {
        nextReload += reloadEvery;
        const marker = join(pi.dirs.root, `reloaded-${++reloads}`);
        // The batch's short jobs end within a second and may wake the model: let those turns pass first.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await pi.waitIdle();
        await pi.run(`/test-reload ${marker}`, steps());
        await waitFor(() => existsSync(marker), "the reload", 30_000);
      }
    }
    // Whatever is still running is read to its end, so every job is reported.
    if (tool === "exec_command") {
      const left = [...new Set(running)];
      if (left.length > 0) {
        await pi.waitIdle();
        const drain = await pi.run(
          "drain",
          steps(callAll(...left.map((id) => ["write_stdin", { session_id: id, yield_time_ms: 5_000 }] as Calls[number])), say("ok")),
        );
        record(drain.tools);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // finished jobs pruned, wakes answered
    await pi.waitIdle();
    const after = (await hostMemory(pi, { gc: true })).now;
    const under = heldBy(pi.pid);
    return {
      tool,
      calls: messages * PER_MESSAGE,
      reloads,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      heap_after_gc_MiB: { before: round(before.heap), after: round(after.heap), growth: round(after.heap - before.heap) },
      rss_after_gc_MiB: { before: round(before.rss), after: round(after.rss), growth: round(after.rss - before.rss) },
      // Idle warm shells are as many as calls ran at once (the soak sends several in one message): their descriptors are theirs, not a leak.
      // `before` counts every descriptor; `after` leaves out those of the warm shells added since.
      descriptors: {
        before: held.descriptors + FDS_PER_WARM_SHELL * held.warmShells,
        after: under.descriptors + FDS_PER_WARM_SHELL * held.warmShells,
      },
      warm_shells: { before: held.warmShells, after: under.warmShells },
      leftover_processes: under.jobProcesses,
      exits_reported_twice: [...exits].filter(([, count]) => count > 1).map(([id]) => id),
    };
  } finally {
    await pi.close(60_000);
  }
}

const round = (value: number) => Math.round(value * 10) / 10;
