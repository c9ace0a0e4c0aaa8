/*
 * `/unified-exec-sessions`: a person's way to look at jobs, stop them, type into them or disarm their
 * wakes without the model. Its list in Pi's TUI redraws ages and states every second (a job that ends
 * meanwhile stays, shown as ended); "View" shows a job's screen or last lines live and consumes
 * nothing; every outcome is told in the person's words. Without a UI it posts the listing.
 */
import type { ExtensionAPI, ExtensionCommandContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import { type ExecRuntime, type HumanView, humanView, type Job, type JobSnapshot, KILL_GRACE_MS } from "../../core/index.ts";
import { metadata, oneLine, shortDuration } from "../results/format.ts";
import type { SessionRuntimes } from "../session-runtimes.ts";
import { jobLabel } from "./jobs-ui.ts";
import { exitWakeDisarmedByPerson } from "./render.ts";
import { letPersonType } from "./typing-overlay.ts";

export const SESSIONS_COMMAND = "unified-exec-sessions";
export const LISTING_MESSAGE_TYPE = "unified-exec-sessions";

const KILL_ALL = "Kill all";
const CANCEL = "Cancel";
const KILL = `Kill (SIGTERM, then SIGKILL after ${KILL_GRACE_MS / 1000} s)`;
const DISARM = "Disarm its wake (the job keeps running)";
const DISARM_PATTERN = "Disarm its wake_on_pattern (the job keeps running)";
const TYPE = "Type into it (your keys go to the job; the model sees only how many)";
const TYPE_SECRET = "Type into it: it asks for a secret (your keys go to the job; the model sees only how many)";
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

/** "Type into it": the model's next result on the job says how many bytes, never which; so does the person's answer. */
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
  const { job, label, gone } = currentLabel(runtime, picked, portsOf([picked]));
  const running = !gone && !job.exit;
  const view = job.tty ? VIEW_SCREEN : VIEW_OUTPUT;
  const disarms = running ? [...(job.wakeArmed ? [DISARM] : []), ...(job.wakePattern !== undefined ? [DISARM_PATTERN] : [])] : [];
  // A prompt that hides what is typed is the person's: the menu says so where they would answer it.
  const live = running ? runtime.jobs().find((candidate) => candidate.id === job.jobId) : undefined;
  const type = (await live?.hidesTyping()) ? TYPE_SECRET : TYPE;
  const actions = running ? [view, type, ...disarms, KILL, CANCEL] : [view, CANCEL];
  const action = await chooseAction(ctx, runtime, job, label, actions);
  if (action === "ended") {
    ctx.ui.notify(endedWhileOpen(runtime, job), "info");
    return;
  }
  if (action === type) ctx.ui.notify(await typeInto(ctx, runtime, job), "info");
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

/** The kill is `kill_session`'s (escalation, wake suppression); without a UI the listing is a message that starts no turn. */
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

/** How often the list's ages and states, and an open view's screen or output, are redrawn. */
const REFRESH_MS = 1_000;
const VIEW_REFRESH_MS = 500;

/** `Kill all 3 jobs? y/N`: the question before every job is stopped, for the jobs still running. */
function killAllQuestion(jobs: readonly JobSnapshot[]): string {
  const count = jobs.filter((job) => !job.exit).length;
  return `Kill all ${count} job${count === 1 ? "" : "s"}? y/N`;
}

/** The picker's title; it says when the turn budget holds notices back (the person's `PI_UNIFIED_EXEC_WAKE_TURNS`). */
function pickerTitle(runtime: ExecRuntime): string {
  const { count, turns } = runtime.completions.heldByBudget;
  if (count === 0) return "unified-exec sessions";
  return `unified-exec sessions · ${count} notice${count === 1 ? "" : "s"} held for the model's next turn (budget: ${turns} turns per 10 min)`;
}

/** What the person picked: a job, every job, or nothing. */
type Pick = { jobId: number } | "kill-all" | undefined;

/**
 * A job as the picker shows it now: its fresh snapshot (running, or ended with its exit), or — gone
 * from the registry, its exit already read — the last one seen, labelled as ended.
 */
function currentLabel(
  runtime: ExecRuntime,
  last: JobSnapshot,
  ports?: ReadonlyMap<number, JobSnapshot>,
): { job: JobSnapshot; label: string; gone: boolean } {
  const fresh = runtime.snapshotOf(last.jobId);
  const scanned = ports?.get(last.jobId);
  const now =
    fresh && scanned && !fresh.exit ? { ...fresh, listening: scanned.listening, deaf: scanned.deaf, usage: scanned.usage } : fresh;
  if (now) return { job: now, label: jobLabel(now), gone: false };
  return { job: last, label: `${last.jobId} · ended · ${oneLine(last.command, 80)}`, gone: true };
}

/** Each running job as the latest scan read it (its listening addresses, a port it lost, its memory). */
function portsOf(jobs: readonly JobSnapshot[]): Map<number, JobSnapshot> {
  return new Map(jobs.map((job) => [job.jobId, job]));
}

class SessionsPicker implements Component {
  private selected = 0;
  /** "Kill all" was chosen: the footer asks, and only `y` confirms. */
  private confirming = false;
  private jobs: JobSnapshot[];
  /** What the latest scan read of each running job. */
  private ports: Map<number, JobSnapshot>;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly tui: TUI,
    private readonly theme: Theme,
    private readonly runtime: ExecRuntime,
    opened: JobSnapshot[],
    private readonly done: (pick: Pick) => void,
  ) {
    this.jobs = opened;
    this.ports = portsOf(opened);
    this.timer = setInterval(() => {
      // One scan of the listening sockets for every running job (a server's port appears once it binds).
      this.ports = portsOf(this.runtime.liveJobs({ ports: true }));
      this.jobs = this.jobs.map((job) => currentLabel(this.runtime, job, this.ports).job);
      this.tui.requestRender();
    }, REFRESH_MS);
    this.timer.unref();
  }

  private get entries(): string[] {
    return [...this.jobs.map((job) => currentLabel(this.runtime, job, this.ports).label), "Kill all", "Cancel"];
  }

  render(width: number): string[] {
    const theme = this.theme;
    const rule = theme.fg("muted", "─".repeat(Math.max(1, width)));
    const rows = this.entries.map((entry, index) => {
      const mark = index === this.selected ? theme.fg("accent", "→ ") : "  ";
      return truncateToWidth(`${mark}${index === this.selected ? theme.fg("accent", entry) : entry}`, width);
    });
    return [
      rule,
      truncateToWidth(theme.fg("toolTitle", theme.bold(pickerTitle(this.runtime))), width),
      ...rows,
      this.confirming
        ? truncateToWidth(theme.fg("warning", theme.bold(killAllQuestion(this.jobs))), width)
        : truncateToWidth(theme.fg("muted", "↑↓ choose · Enter act on it · Esc close · ages update every second"), width),
      rule,
    ];
  }

  handleInput(data: string): void {
    if (this.confirming) {
      this.confirming = false;
      if (data === "y" || data === "Y") {
        this.done("kill-all");
        return;
      }
      this.tui.requestRender();
      return;
    }
    const count = this.jobs.length + 2;
    if (matchesKey(data, "up")) this.selected = (this.selected + count - 1) % count;
    else if (matchesKey(data, "down")) this.selected = (this.selected + 1) % count;
    else if (matchesKey(data, "escape")) this.done(undefined);
    else if (matchesKey(data, "enter")) {
      const job = this.jobs[this.selected];
      if (!job && this.selected === this.jobs.length) this.confirming = true;
      else {
        this.done(job ? { jobId: job.jobId } : undefined);
        return;
      }
    }
    this.tui.requestRender();
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
  }
}

/** Lets the person pick among `opened` in Pi's TUI, the list kept current while it is open. */
function pickLive(ctx: ExtensionCommandContext, runtime: ExecRuntime, opened: JobSnapshot[]): Promise<Pick> {
  return ctx.ui.custom<Pick>((tui, theme, _keys, done) => new SessionsPicker(tui, theme, runtime, opened, done));
}

/** The view's title and lines, as the TUI's panel and an RPC notification show them. */
export function viewLines(job: JobSnapshot, view: HumanView): { title: string; lines: string[] } {
  if (view.kind === "output") {
    const count = view.lines.length;
    const title = `${jobLabel(job)} — ${count === 1 ? "the last line" : `the last ${count} lines`} of its output`;
    return { title, lines: view.lines.length ? view.lines : ["(no output yet)"] };
  }
  const { screen } = view;
  const where = `screen ${screen.cols}×${screen.rows}, cursor ${screen.cursor.row},${screen.cursor.col}`;
  const title = `${jobLabel(job)} — ${where}${screen.alternate ? " (alternate screen)" : screen.repainting ? " (repainting)" : ""}`;
  return { title, lines: screen.lines };
}

/** The panel: a title, the lines cut to the width, a hint; redrawn as the job changes. */
class JobViewPanel implements Component {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private content: { title: string; lines: string[] },
    private readonly theme: Theme,
    private readonly close: () => void,
  ) {}

  /** Redraws every {@link VIEW_REFRESH_MS} with what `next` gives, until disposed. */
  follow(next: () => Promise<{ title: string; lines: string[] } | undefined>, redraw: () => void): void {
    this.timer = setInterval(() => {
      void next()
        .then((content) => {
          if (!content || !this.timer) return;
          this.content = content;
          redraw();
        })
        .catch(() => {});
    }, VIEW_REFRESH_MS);
    this.timer.unref();
  }

  render(width: number): string[] {
    const theme = this.theme;
    const rule = theme.fg("muted", "─".repeat(Math.max(1, width)));
    const body = this.content.lines.map((line) => truncateToWidth(line, width));
    return [
      rule,
      truncateToWidth(theme.fg("toolTitle", theme.bold(this.content.title)), width),
      ...body,
      truncateToWidth(theme.fg("muted", "Esc, Enter or q to close · redraws live"), width),
      rule,
    ];
  }

  handleInput(data: string): void {
    if (matchesKey(data, "escape") || matchesKey(data, "enter") || data === "q") this.close();
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** Shows `job`'s view until the person closes it (TUI), or once (RPC); the title follows the job, with the ports the picker showed. */
async function showJobView(ctx: ExtensionCommandContext, runtime: ExecRuntime, job: Job, listening?: string[]): Promise<void> {
  const withPorts = (now: JobSnapshot | undefined) => (now && listening?.length && !now.exit ? { ...now, listening } : now);
  let label: JobSnapshot | undefined = withPorts(runtime.snapshotOf(job.id));
  const current = async () => {
    label = withPorts(runtime.snapshotOf(job.id)) ?? label;
    return label ? viewLines(label, await humanView(job)) : undefined;
  };
  const first = await current();
  if (!first) return;
  if (ctx.mode !== "tui") {
    ctx.ui.notify([first.title, ...first.lines].join("\n"), "info");
    return;
  }
  await ctx.ui.custom<void>((tui: TUI, theme: Theme, _keys, done) => {
    const panel = new JobViewPanel(first, theme, () => done());
    panel.follow(current, () => tui.requestRender());
    return panel;
  });
}
