import type { ExtensionCommandContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import type { ExecRuntime, JobSnapshot } from "../../core/index.ts";
import { oneLine } from "../results/format.ts";
import { jobLabel } from "./jobs-ui.ts";

/**
 * The sessions picker's list in Pi's TUI: the jobs running when it opened, each with its state, age
 * and listening ports redrawn every second while it is open. A job that ends meanwhile stays on the
 * list, shown as ended (`exit 143 after 3.5s`), so what the person points at never changes under
 * them. "Kill all" asks first (`Kill all 3 jobs? y/N`): only `y` goes on.
 */

/** How often the ages and states are redrawn. */
const REFRESH_MS = 1_000;

/** `Kill all 3 jobs? y/N`: the question before every job is stopped, for the jobs still running. */
export function killAllQuestion(jobs: readonly JobSnapshot[]): string {
  const count = jobs.filter((job) => !job.exit).length;
  return `Kill all ${count} job${count === 1 ? "" : "s"}? y/N`;
}

/** The picker's title; it says when the turn budget holds notices back (the person's `PI_UNIFIED_EXEC_WAKE_TURNS`). */
export function pickerTitle(runtime: ExecRuntime): string {
  const { count, turns } = runtime.completions.heldByBudget;
  if (count === 0) return "unified-exec sessions";
  return `unified-exec sessions · ${count} notice${count === 1 ? "" : "s"} held for the model's next turn (budget: ${turns} turns per 10 min)`;
}

/** What the person picked: a job, every job, or nothing. */
export type Pick = { jobId: number } | "kill-all" | undefined;

/**
 * A job as the picker shows it now: its fresh snapshot (running, or ended with its exit), or — gone
 * from the registry, its exit already read — the last one seen, labelled as ended.
 */
export function currentLabel(
  runtime: ExecRuntime,
  last: JobSnapshot,
  ports?: ReadonlyMap<number, string[]>,
): { job: JobSnapshot; label: string; gone: boolean } {
  const fresh = runtime.snapshotOf(last.jobId);
  const listening = ports?.get(last.jobId);
  const now = fresh && listening && !fresh.exit ? { ...fresh, listening } : fresh;
  if (now) return { job: now, label: jobLabel(now), gone: false };
  return { job: last, label: `${last.jobId} · ended · ${oneLine(last.command, 80)}`, gone: true };
}

/** Each job's listening addresses, where the snapshots carry them. */
function portsOf(jobs: readonly JobSnapshot[]): Map<number, string[]> {
  return new Map(jobs.flatMap((job) => (job.listening?.length ? [[job.jobId, job.listening] as const] : [])));
}

class SessionsPicker implements Component {
  private selected = 0;
  /** "Kill all" was chosen: the footer asks, and only `y` confirms. */
  private confirming = false;
  private jobs: JobSnapshot[];
  /** The listening addresses of each running job, from the latest scan. */
  private ports: Map<number, string[]>;
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
export function pickLive(ctx: ExtensionCommandContext, runtime: ExecRuntime, opened: JobSnapshot[]): Promise<Pick> {
  return ctx.ui.custom<Pick>((tui, theme, _keys, done) => new SessionsPicker(tui, theme, runtime, opened, done));
}
