import type { ExtensionCommandContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import { type ExecRuntime, type HumanView, humanView, type Job, type JobSnapshot, VIEW_REFRESH_MS } from "../../core/index.ts";
import { jobLabel } from "./jobs-ui.ts";

/**
 * The sessions picker's "view": a job's screen (PTY) or the last lines of its output (pipes), shown
 * to the human without the model and without consuming anything the model has not read. In Pi's
 * TUI it is a panel that redraws live until Esc, Enter or q; an RPC client gets it as a
 * notification (its own UI shows it). Lines are already inert (the core's snapshot and decoder
 * sanitize them); a screen's rows are cut, never wrapped, to the panel's width.
 */

/** The view's title and lines, as both presentations show them. */
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

/**
 * Shows `job`'s view until the human closes it (TUI), or once as a notification (RPC). Its title is
 * the job as it is at each redraw: a job that exits while it is open is shown as ended. `listening`:
 * the ports the picker showed, kept in the title while the job runs (not scanned again per redraw).
 */
export async function showJobView(ctx: ExtensionCommandContext, runtime: ExecRuntime, job: Job, listening?: string[]): Promise<void> {
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
