import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { type ExecRuntime, type JobSnapshot, KILL_GRACE_MS } from "../../core/index.ts";
import { metadata, oneLine, shortDuration } from "../results/format.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { letPersonType } from "./ask-person.ts";
import { exitWakeDisarmedByPerson } from "./disarmed-wakes.ts";
import { showJobView } from "./job-view.ts";
import { jobLabel } from "./jobs-ui.ts";
import { currentLabel, killAllQuestion, type Pick, pickerTitle, pickLive } from "./sessions-picker.ts";

export const SESSIONS_COMMAND = "unified-exec-sessions";
export const LISTING_MESSAGE_TYPE = "unified-exec-sessions";

const KILL_ALL = "Kill all";
const CANCEL = "Cancel";
const KILL = `Kill (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`;
const DISARM = "Disarm its wake (the job keeps running)";
const DISARM_PATTERN = "Disarm its wake_on_pattern (the job keeps running)";
const TYPE = "Type into it (your keys go to the job; the model sees only how many)";
const VIEW_SCREEN = "View its screen";
const VIEW_OUTPUT = "View the last lines of its output";

/**
 * A kill by the person: the model's next call on the id hears of it (`killed_by: user`) with the
 * unread output. Returns what to tell the person, in their words, whatever happened.
 */
async function killJob(runtime: ExecRuntime, jobId: number): Promise<string> {
  const before = runtime.snapshotOf(jobId);
  if (!before) return `Session ${jobId} already ended; nothing to kill.`;
  if (before.exit) return `Session ${jobId} already ended (${endedHow(before)}); nothing to kill.`;
  try {
    const { job: after, termination } = await runtime.kill(jobId, "SIGTERM", undefined, "user");
    if (termination.failure) return `Session ${jobId} could not be stopped: ${metadata(termination.failure)}`;
    if (!after.exit) return `Session ${jobId} is still running after SIGKILL.`;
    const evidence = termination.cleanup === "confirmed" ? "all its processes are gone" : "a process it started may still run";
    return `Session ${jobId} stopped (${endedHow(after)}); ${evidence}.`;
  } catch {
    const now = runtime.snapshotOf(jobId);
    return now?.exit
      ? `Session ${jobId} already ended (${endedHow(now)}); nothing to kill.`
      : `Session ${jobId} already ended; nothing to kill.`;
  }
}

/** `exit 143 after 3.5s`, `killed by SIGKILL after 2.0s`. */
function endedHow(job: JobSnapshot): string {
  const exit = job.exit!;
  const how = exit.exitCode === null && exit.signal ? `killed by ${exit.signal}` : `exit ${exit.exitCode ?? "unknown"}`;
  return `${how} after ${shortDuration(job.elapsedMs)}`;
}

/**
 * "Type into it": the person takes the job's keyboard (the overlay on a PTY in Pi's TUI, a line
 * elsewhere); the model's next result on the job says how many bytes, never which. Returns what to
 * tell the person afterwards — a count, never what they typed.
 */
async function typeInto(ctx: ExtensionCommandContext, runtime: ExecRuntime, job: JobSnapshot): Promise<string> {
  const taken = runtime.typeInto(job.jobId);
  if ("refused" in taken) {
    if (taken.refused === "typing") return `Someone is already typing into session ${job.jobId}.`;
    return `Session ${job.jobId} has already ended; there is nothing to type into.`;
  }
  let cancelled = true;
  try {
    cancelled = await letPersonType(ctx, taken.job, taken.typing, `session ${job.jobId}: \`${oneLine(job.command, 120)}\``);
  } finally {
    taken.typing.end(cancelled);
  }
  const bytes = taken.typing.bytes;
  return bytes === 0
    ? `» nothing was typed into session ${job.jobId}`
    : `» you typed ${bytes} byte${bytes === 1 ? "" : "s"} into session ${job.jobId}`;
}

/**
 * The picker where Pi draws no live list (an RPC client's dialog): the jobs as they were when it
 * opened. "Kill all" asks first, as the live list does.
 */
async function pickByDialog(ctx: ExtensionCommandContext, runtime: ExecRuntime, live: JobSnapshot[]): Promise<Pick> {
  const labels = live.map((job) => jobLabel(job));
  const choice = await ctx.ui.select(pickerTitle(runtime), [...labels, KILL_ALL, CANCEL]);
  if (choice === KILL_ALL) {
    const sure = await ctx.ui.confirm(killAllQuestion(live), `Each gets SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s.`);
    return sure ? "kill-all" : undefined;
  }
  const job = choice === undefined ? undefined : live[labels.indexOf(choice)];
  return job ? { jobId: job.jobId } : undefined;
}

/**
 * The action menu of a job, open while the job runs: it closes by itself when the job ends (an
 * action chosen for a running job would no longer mean the same). `"ended"` when it closed so.
 */
async function chooseAction(
  ctx: ExtensionCommandContext,
  runtime: ExecRuntime,
  job: JobSnapshot,
  label: string,
  actions: string[],
): Promise<string | undefined | "ended"> {
  if (job.exit) return ctx.ui.select(label, actions);
  const ended = new AbortController();
  const hasEnded = () => {
    const now = runtime.snapshotOf(job.jobId);
    return now === undefined || now.exit !== undefined;
  };
  const unsubscribe = runtime.onChange(() => {
    if (hasEnded()) ended.abort();
  });
  try {
    if (hasEnded()) return "ended";
    const action = await ctx.ui.select(label, actions, { signal: ended.signal });
    return ended.signal.aborted ? "ended" : action;
  } finally {
    unsubscribe();
  }
}

/** `Session 3 ended (exit 0 after 4.1s) while its menu was open; the menu was closed.` */
function endedWhileOpen(runtime: ExecRuntime, job: JobSnapshot): string {
  const now = runtime.snapshotOf(job.jobId);
  const how = now?.exit ? ` (${endedHow(now)})` : "";
  return `Session ${job.jobId} ended${how} while its menu was open; the menu was closed.`;
}

/**
 * What the person may do with the job they picked, as it is now; what happened is told in their
 * words. The menu opens on View (harmless); Kill is never the first entry.
 */
async function actOn(ctx: ExtensionCommandContext, runtime: ExecRuntime, picked: JobSnapshot): Promise<void> {
  const { job, label, gone } = currentLabel(runtime, picked, new Map(picked.listening ? [[picked.jobId, picked.listening]] : []));
  const running = !gone && !job.exit;
  const view = job.tty ? VIEW_SCREEN : VIEW_OUTPUT;
  const disarms = running ? [...(job.wakeArmed ? [DISARM] : []), ...(job.wakePattern !== undefined ? [DISARM_PATTERN] : [])] : [];
  const actions = running ? [view, TYPE, ...disarms, KILL, CANCEL] : [view, CANCEL];
  const action = await chooseAction(ctx, runtime, job, label, actions);
  if (action === "ended") {
    ctx.ui.notify(endedWhileOpen(runtime, job), "info");
    return;
  }
  if (action === TYPE) ctx.ui.notify(await typeInto(ctx, runtime, job), "info");
  if (action === KILL) ctx.ui.notify(await killJob(runtime, job.jobId), "info");
  if (action === view) {
    const target = runtime.jobs().find((candidate) => candidate.id === job.jobId);
    if (target) await showJobView(ctx, runtime, target, job.listening);
    else ctx.ui.notify(`Session ${job.jobId} has ended and its output was read; the full output is in ${metadata(job.logPath)}.`, "info");
  }
  if (action === DISARM) {
    // The person's disarm is told to the model in its next result on the job, and the rows stop saying `wake armed`.
    const outcome = runtime.setOnExit(job.jobId, { onExit: "none" }, "user");
    if (outcome.found && outcome.onExit === "disarmed") exitWakeDisarmedByPerson(job.jobId);
    ctx.ui.notify(
      outcome.found && outcome.onExit === "disarmed"
        ? `Session ${job.jobId} will not wake the model when it exits.`
        : outcome.found && outcome.onExit === "too_late"
          ? `Session ${job.jobId} has already ended and the model was told; there was no exit wake left to disarm.`
          : `Session ${job.jobId} had no exit wake to disarm.`,
      "info",
    );
  }
  if (action === DISARM_PATTERN) {
    const outcome = runtime.setOnExit(job.jobId, { wakePattern: null }, "user");
    ctx.ui.notify(
      outcome.found && outcome.pattern === "disarmed"
        ? `Session ${job.jobId}'s wake_on_pattern is disarmed.`
        : `Session ${job.jobId} had no wake_on_pattern to disarm.`,
      "info",
    );
  }
}

/**
 * `/unified-exec-sessions`: the human's way to look at jobs, stop them or disarm wakes without the
 * model. "View" shows a job's screen or the last lines of its output and consumes nothing; the kill is
 * the same (escalation, wake suppression) as `kill_session`. Without a UI (print, JSON) it posts the
 * listing as a message that does not start a turn: there is no picker to view from.
 */
export function registerSessionsCommand(pi: ExtensionAPI, runtimes: SessionRuntimes): void {
  pi.registerCommand(SESSIONS_COMMAND, {
    description: "List running unified-exec jobs: view one's screen or output, type into it, disarm its wakes, kill it, or kill all",
    handler: async (_args: string, ctx: ExtensionCommandContext) => {
      const runtime = runtimes.existing(ctx.sessionManager);
      // In the order they were started (ids count up at spawn), whatever order they were published in.
      const live = (runtime?.liveJobs({ ports: true }) ?? []).sort((a, b) => a.jobId - b.jobId);
      if (!ctx.hasUI) {
        const text = live.length
          ? ["unified-exec sessions running:", ...live.map((job) => `- ${jobLabel(job)}`)].join("\n")
          : "No unified-exec sessions are running.";
        pi.sendMessage({ customType: LISTING_MESSAGE_TYPE, content: text, display: true }, { triggerTurn: false });
        return;
      }
      if (!runtime || live.length === 0) {
        ctx.ui.notify("No unified-exec sessions are running.", "info");
        return;
      }
      const pick = ctx.mode === "tui" ? await pickLive(ctx, runtime, live) : await pickByDialog(ctx, runtime, live);
      if (pick === undefined) return;
      if (pick === "kill-all") {
        const results = await Promise.all(live.map((job) => killJob(runtime, job.jobId)));
        ctx.ui.notify(results.join("\n"), "info");
        return;
      }
      const chosen = live.find((job) => job.jobId === pick.jobId);
      if (chosen) await actOn(ctx, runtime, chosen);
    },
  });
}
