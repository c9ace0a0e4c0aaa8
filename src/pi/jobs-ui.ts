import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import type { ExecRuntime, LiveJob } from "../core/runtime.ts";
import { oneLine } from "./results/format.ts";

export const STATUS_KEY = "unified-exec";
export const WIDGET_KEY = "unified-exec-jobs";

/** `3 · npm run dev [wake]`: how a live job is named to the human. */
export function jobLabel(job: LiveJob): string {
  return `${job.sessionId} · ${oneLine(job.command, 80)}${job.wakeArmed ? " [wake]" : ""}`;
}

/**
 * What the human sees of running jobs without asking the model: a footer status while any job runs,
 * refreshed the moment one exits, and, after `/tree` navigation, a widget above the editor listing
 * them (jobs survive branch navigation; the widget says so). Pi clears extension UI on reload and
 * session switch, so `bind` sets everything again.
 */
export class JobsUi {
  private ui: ExtensionUIContext | undefined;
  private runtime: ExecRuntime | undefined;
  private unsubscribe: (() => void) | undefined;
  private widget = false;

  bind(ui: ExtensionUIContext): void {
    this.ui = ui;
    this.refresh();
  }

  /** Follows `runtime`'s jobs. */
  watch(runtime: ExecRuntime): void {
    this.unsubscribe?.();
    this.runtime = runtime;
    this.unsubscribe = runtime.onChange(() => this.refresh());
    this.refresh();
  }

  /** After `/tree` navigation: list the live jobs above the editor until none is left. */
  showWidget(): void {
    this.widget = true;
    this.refresh();
  }

  /** Stops drawing: the old UI context must not be touched after a reload or session switch. */
  unbind(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.runtime = undefined;
    this.ui = undefined;
    this.widget = false;
  }

  refresh(): void {
    const ui = this.ui;
    if (!ui) return;
    const live = this.runtime?.liveJobs() ?? [];
    ui.setStatus(STATUS_KEY, live.length ? `unified-exec: ${live.length} session${live.length === 1 ? "" : "s"} running` : undefined);
    if (!this.widget) return;
    if (live.length === 0) {
      this.widget = false;
      ui.setWidget(WIDGET_KEY, undefined);
      return;
    }
    ui.setWidget(WIDGET_KEY, ["unified-exec sessions still running:", ...live.map((job) => `  ${jobLabel(job)}`)], { placement: "aboveEditor" });
  }
}
