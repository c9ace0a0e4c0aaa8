import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import type { ExecRuntime, JobSnapshot } from "../../core/index.ts";
import { oneLine, shortDuration } from "../results/format.ts";
import { deafText } from "../results/job-fields.ts";

export const STATUS_KEY = "unified-exec";
export const WIDGET_KEY = "unified-exec-jobs";

/**
 * `3 · running 2m10s · npm run dev :5173 [wake] · 212 MB, 3 s CPU`: how a job is named to the human,
 * with its state and age (a scan adds ports, a port it lost, memory and CPU time).
 * A label drawn once and left on screen (the widget) leaves the age out rather than show it frozen.
 */
export function jobLabel(job: JobSnapshot, withAge = true): string {
  const exit =
    job.exit && (job.exit.exitCode === null && job.exit.signal ? `killed by ${job.exit.signal}` : `exit ${job.exit.exitCode ?? "null"}`);
  const age = shortDuration(job.elapsedMs);
  const state = withAge ? (exit ? `${exit} after ${age} · ` : `running ${age} · `) : exit ? `${exit} · ` : "";
  const ports = job.listening?.length ? ` ${job.listening.map((address) => address.slice(address.lastIndexOf(":"))).join(" ")}` : "";
  const deaf = job.deaf ? ` listening: none (${deafText(job.deaf)})` : "";
  const memory = job.usage ? ` · ${Math.round(job.usage.rssBytes / 1024 / 1024)} MB, ${Math.round(job.usage.cpuMs / 1000)} s CPU` : "";
  const pattern = job.wakePattern !== undefined ? ` [${patternWords(job.wakePattern, 40)}]` : "";
  const exitWake = job.wakeArmed ? ` [${job.wakeLevel ?? "wake"}]` : "";
  return `${job.jobId} · ${state}${oneLine(job.command, 80)}${ports}${deaf}${exitWake}${pattern}${memory}`;
}

/** An armed pattern as a row names it: `wake /ERROR/`, or `next_turn /ERROR/` at that level. */
export function patternWords(written: string, limit: number): string {
  const nextTurn = written.startsWith("next_turn:");
  return `${nextTurn ? "next_turn" : "wake"} /${oneLine(nextTurn ? written.slice("next_turn:".length) : written, limit)}/`;
}

/**
 * A footer status while any job runs, and after `/tree` navigation a widget listing them (jobs survive
 * branch navigation). Pi clears extension UI on reload and session switch: `bind` sets it all again.
 */
export class JobsUi {
  private ui: ExtensionUIContext | undefined;
  private runtime: ExecRuntime | undefined;
  private unsubscribe: (() => void) | undefined;
  private widget = false;
  /** What was last drawn, so an unchanged status is not sent again (every job start and exit refreshes). */
  private shown: { status: string | undefined; widget: string } | undefined;

  bind(ui: ExtensionUIContext): void {
    this.ui = ui;
    this.shown = undefined;
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
    this.shown = undefined;
  }

  refresh(): void {
    const ui = this.ui;
    if (!ui) return;
    const live = this.runtime?.liveJobs() ?? [];
    const status = live.length ? `unified-exec: ${live.length} session${live.length === 1 ? "" : "s"} running` : undefined;
    const lines =
      this.widget && live.length ? ["unified-exec sessions still running:", ...live.map((job) => `  ${jobLabel(job, false)}`)] : [];
    const widget = this.widget ? JSON.stringify(lines) : "";
    if (this.shown?.status !== status || this.shown === undefined) ui.setStatus(STATUS_KEY, status);
    if (this.widget && this.shown?.widget !== widget) {
      if (lines.length) ui.setWidget(WIDGET_KEY, lines, { placement: "aboveEditor" });
      else {
        ui.setWidget(WIDGET_KEY, undefined);
        this.widget = false;
      }
    }
    this.shown = { status, widget: this.widget ? widget : "" };
  }
}
