import type { ExtensionCommandContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import type { ExecRuntime, JobSnapshot } from "../../core/index.ts";
import { oneLine } from "../results/format.ts";
import { jobLabel } from "./jobs-ui.ts";

/**
 * The sessions picker's list in Pi's TUI: the jobs running when it opened, each with its state and
 * age redrawn every second while it is open. A job that ends meanwhile stays on the list, shown as
 * ended (`exit 143 after 3.5s`), so what the person points at never changes under them.
 */

/** How often the ages and states are redrawn. */
const REFRESH_MS = 1_000;

/** What the person picked: a job, every job, or nothing. */
export type Pick = { jobId: number } | "kill-all" | undefined;

/**
 * A job as the picker shows it now: its fresh snapshot (running, or ended with its exit), or — gone
 * from the registry, its exit already read — the last one seen, labelled as ended.
 */
export function currentLabel(runtime: ExecRuntime, last: JobSnapshot): { job: JobSnapshot; label: string; gone: boolean } {
  const now = runtime.snapshotOf(last.jobId);
  if (now) return { job: now, label: jobLabel(now), gone: false };
  return { job: last, label: `${last.jobId} · ended · ${oneLine(last.command, 80)}`, gone: true };
}

class SessionsPicker implements Component {
  private selected = 0;
  private jobs: JobSnapshot[];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly tui: TUI,
    private readonly theme: Theme,
    private readonly runtime: ExecRuntime,
    opened: JobSnapshot[],
    private readonly done: (pick: Pick) => void,
  ) {
    this.jobs = opened;
    this.timer = setInterval(() => {
      this.jobs = this.jobs.map((job) => currentLabel(this.runtime, job).job);
      this.tui.requestRender();
    }, REFRESH_MS);
    this.timer.unref();
  }

  private get entries(): string[] {
    return [...this.jobs.map((job) => currentLabel(this.runtime, job).label), "Kill all", "Cancel"];
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
      truncateToWidth(theme.fg("toolTitle", theme.bold("unified-exec sessions")), width),
      ...rows,
      truncateToWidth(theme.fg("muted", "↑↓ choose · Enter act on it · Esc close · ages update every second"), width),
      rule,
    ];
  }

  handleInput(data: string): void {
    const count = this.jobs.length + 2;
    if (matchesKey(data, "up")) this.selected = (this.selected + count - 1) % count;
    else if (matchesKey(data, "down")) this.selected = (this.selected + 1) % count;
    else if (matchesKey(data, "escape")) this.done(undefined);
    else if (matchesKey(data, "enter")) {
      const job = this.jobs[this.selected];
      this.done(job ? { jobId: job.jobId } : this.selected === this.jobs.length ? "kill-all" : undefined);
      return;
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
