/**
 * The long soak: a mixed agent workload for minutes in one real Pi host — short commands, floods, PTY
 * `python3 -q` REPLs left running and typed into, jobs killed and listed, up to four calls in a
 * message, a `/reload` now and then — with an idle point after every reload where the model lists
 * every job and SIGKILLs each listed id. At every idle point Pi must hold what it held after its
 * warm-up: the same descriptors (the idle warm shells' aside), no terminal, no job log, no child but
 * the watchdog and warm shells. After Pi quits no process may carry one of its jobs' markers.
 * `npm run bench:soak` runs 5 minutes; `SOAK_MINUTES` sets another length.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type HeldBy, heldBy, markedProcesses } from "../helpers/held-by.ts";
import { EXTENSION_ENTRY, type PiHost, REPO_ROOT } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { waitFor } from "../helpers/processes.ts";
import { callAll, type ModelStep, type ModelView, say } from "../helpers/scripted-model.ts";

const PROBE = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");
/** Most calls in one model message (the issue's workload: up to four). */
const PER_MESSAGE = 4;
/** Messages per prompt: the faux model posts the whole transcript each turn, so shorter prompts keep it quick. */
const MESSAGES_PER_PROMPT = 8;
type Calls = [string, Record<string, unknown>][];
/** A flood of 8 MB (a build's log): over minutes the runtime's logs near their quota, as in a long session. */
const FLOOD = "head -c 8000000 /dev/zero | tr '\\0' x | fold -w 99";

export interface LongSoakFigures {
  host: string;
  minutes: number;
  calls: number;
  reloads: number;
  warmUp: HeldBy;
  /** One per reload: after the model killed every listed job. */
  idlePoints: (HeldBy & { listed: number; atSecond: number })[];
  /** Processes carrying a marker of this Pi's jobs after it quit. */
  markedAfterQuit: number;
  /** Results that were errors, by tool and first line (the workload expects none). */
  errors: Record<string, number>;
  leaks: string[];
}

/** Message `n` of the workload; `repls` are REPLs left running, `others` jobs left running. */
function message(n: number, repls: number[], others: number[]): Calls {
  const calls: Calls = [["exec_command", { cmd: `echo soak-${n}` }]];
  if (n % 3 === 0) calls.push(["exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 400 }]);
  if (n % 5 === 1) calls.push(["exec_command", { cmd: FLOOD, yield_time_ms: 5_000 }]);
  if (n % 4 === 2 && repls.length > 0) calls.push(["write_stdin", { session_id: repls.at(-1), chars: "print(6*7)\n", yield_time_ms: 300 }]);
  if (n % 12 === 4 && repls.length > 1) calls.push(["kill_session", { session_id: repls.shift() }]);
  if (n % 7 === 5) calls.push(["exec_command", { cmd: "sleep 20", yield_time_ms: 250 }]);
  if (n % 7 === 6 && others.length > 0) calls.push(["write_stdin", { session_id: others.shift(), yield_time_ms: 250 }]);
  if (n % 8 === 3) calls.push(["list_sessions", {}]);
  if (n % 4 === 1) calls.push(["exec_command", { cmd: "sleep 0.4; echo late", yield_time_ms: 250, on_exit: "wake" }]);
  if (n % 2 === 0) calls.push(["exec_command", { cmd: "printf 'tty %s\\n' x", tty: true }]);
  calls.push(["exec_command", { cmd: "ls -la" }]);
  return calls.slice(0, PER_MESSAGE);
}

/** The model lists every job and SIGKILLs each listed id; resolves with how many were listed. */
async function killEverythingListed(pi: PiRpcHost): Promise<number> {
  let listed = 0;
  await pi.waitIdle(60_000);
  await pi.run("idle point", (view: ModelView): ModelStep => {
    if (view.turn === 0) return callAll(["list_sessions", {}]);
    if (view.turn === 1) {
      const sessions = (view.last[0]?.details?.sessions ?? []) as { session_id: number; status: string }[];
      listed = sessions.length;
      const live = sessions.filter((session) => session.status === "running");
      if (live.length > 0)
        return callAll(...live.map((s) => ["kill_session", { session_id: s.session_id, signal: "SIGKILL" }] as Calls[number]));
    }
    return say("ok");
  });
  return listed;
}

/** Whether `now` holds no more than `base` (the warm shells' own descriptors are left out of both). */
function leaksOf(base: HeldBy, now: HeldBy): string[] {
  const leaks: string[] = [];
  if (now.descriptors > base.descriptors + 2) leaks.push(`descriptors ${base.descriptors} → ${now.descriptors}`);
  if (now.terminals > base.terminals) leaks.push(`terminals ${base.terminals} → ${now.terminals}`);
  if (now.logs > base.logs) leaks.push(`logs ${base.logs} → ${now.logs}`);
  if (now.jobProcesses > base.jobProcesses) leaks.push(`job processes ${base.jobProcesses} → ${now.jobProcesses} (${now.repls} REPLs)`);
  return leaks;
}

/** Runs the workload for `minutes`, a `/reload` every `reloadEverySeconds`, an idle point after each. */
export async function longSoak(
  host: PiHost,
  minutes: number,
  {
    reloadEverySeconds = 60,
    idleEvery = 3,
    log = (_: string) => {},
  }: { reloadEverySeconds?: number; idleEvery?: number; log?: (line: string) => void } = {},
): Promise<LongSoakFigures> {
  const pi = await PiRpcHost.start(host, { extensions: [EXTENSION_ENTRY, PROBE] });
  const logDir = pi.dirs.logs;
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const figures: LongSoakFigures = {
    host: host.name,
    minutes,
    calls: 0,
    reloads: 0,
    warmUp: heldBy(pi.pid, logDir),
    idlePoints: [],
    markedAfterQuit: 0,
    errors: {},
    leaks: [],
  };
  try {
    await pi.run("warm up", (view) => (view.turn === 0 ? callAll(["exec_command", { cmd: "true" }]) : say("ok")));
    await killEverythingListed(pi);
    await settle(pi, logDir, figures.warmUp);
    figures.warmUp = heldBy(pi.pid, logDir);
    const repls: number[] = [];
    const others: number[] = [];
    let n = 0;
    let nextReload = reloadEverySeconds;
    while (performance.now() - started < minutes * 60_000) {
      await pi.waitIdle(60_000);
      const from = n;
      const run = await pi.run(
        `soak ${from}`,
        (view: ModelView): ModelStep =>
          view.turn < MESSAGES_PER_PROMPT ? callAll(...message(from + view.turn, repls, others)) : say("ok"),
        300_000,
      );
      n += MESSAGES_PER_PROMPT;
      figures.calls += run.tools.length;
      for (const tool of run.tools) {
        if (tool.isError) {
          const key = `${tool.name}: ${tool.text.split("\n")[0]!.slice(0, 160)}`;
          figures.errors[key] = (figures.errors[key] ?? 0) + 1;
        }
        if (tool.name !== "exec_command" || tool.details?.status !== "running") continue;
        (String(tool.args.cmd).startsWith("python3") ? repls : others).push(tool.details.session_id as number);
      }
      if (seconds() < nextReload) continue;
      nextReload += reloadEverySeconds;
      const marker = join(pi.dirs.root, `reloaded-${++figures.reloads}`);
      await pi.waitIdle(60_000);
      const reloadStart = performance.now();
      await pi.run(`/test-reload ${marker}`, () => say("ok"));
      await waitFor(() => existsSync(marker), "the reload", 30_000);
      const reloadMs = Math.round(performance.now() - reloadStart);
      log(
        `[soak] ${host.name} ${seconds()} s: reload ${figures.reloads} took ${reloadMs} ms; ${repls.length} REPLs and ${others.length} jobs running`,
      );
      if (figures.reloads % idleEvery !== 0) continue;
      const listed = await killEverythingListed(pi);
      repls.length = 0;
      others.length = 0;
      const now = await settle(pi, logDir, figures.warmUp);
      figures.idlePoints.push({ ...now, listed, atSecond: seconds() });
      const leaks = leaksOf(figures.warmUp, now);
      log(
        `[soak] ${host.name} ${seconds()} s: ${figures.calls} calls, ${figures.reloads} reloads, ${listed} listed, ${JSON.stringify(now)}${leaks.length ? ` LEAK ${leaks.join("; ")}` : ""}`,
      );
      figures.leaks.push(...leaks.map((leak) => `at ${seconds()} s: ${leak}`));
    }
  } finally {
    await pi.close(60_000);
  }
  // Pi's shutdown waits for its jobs; a process that outlived it is a leak however it was started.
  figures.markedAfterQuit = markedProcesses(logDir).length;
  if (figures.markedAfterQuit > 0) figures.leaks.push(`${figures.markedAfterQuit} marked processes after Pi quit`);
  return figures;
}

/** What Pi holds once killed jobs are gone (a deadline, not a fixed pause: closing a PTY takes a moment). */
async function settle(pi: PiRpcHost, logDir: string, base: HeldBy): Promise<HeldBy> {
  let now = heldBy(pi.pid, logDir);
  const deadline = performance.now() + 10_000;
  while (leaksOf(base, now).length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    now = heldBy(pi.pid, logDir);
  }
  return now;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { PI_HOSTS } = await import("../helpers/hosts.ts");
  const minutes = Number(process.env.SOAK_MINUTES) || 5;
  const reloadEverySeconds = Number(process.env.SOAK_RELOAD_SECONDS) || 60;
  const idleEvery = Number(process.env.SOAK_IDLE_EVERY) || 3;
  const hosts = process.env.SOAK_HOST ? PI_HOSTS.filter((h) => h.name.includes(process.env.SOAK_HOST!)) : PI_HOSTS;
  let failed = false;
  for (const host of hosts) {
    const figures = await longSoak(host, minutes, { reloadEverySeconds, idleEvery, log: (line) => console.error(line) });
    console.log(JSON.stringify(figures, null, 2));
    failed ||= figures.leaks.length > 0;
  }
  process.exitCode = failed ? 1 : 0;
}
