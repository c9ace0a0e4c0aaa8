/**
 * Which model text `exec_command` and `write_stdin` results use, chosen once when the extension
 * activates: our lean header (`default`) or Codex's own text (`codex`, for models trained on Codex).
 * A value we do not know is not fatal: the default is used and the user hears it once — a warning
 * notice at the first session start, or, in print and JSON runs (where Pi drops notices), the
 * `notice` of the first result.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { metadataLine } from "../core/index.ts";

/** The environment variable that picks the format. */
export const FORMAT_ENV = "PI_UNIFIED_EXEC_FORMAT";

export type ResultFormat = "default" | "codex";

const FORMATS: readonly ResultFormat[] = ["default", "codex"];

/** The format chosen at activation, and the warning about a value we did not know, until it is told. */
export class ResultFormatSetting {
  readonly format: ResultFormat;
  private warning: string | undefined;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    const raw = env[FORMAT_ENV];
    const value = raw?.trim().toLowerCase();
    if (value === undefined || value === "") this.format = "default";
    else if ((FORMATS as readonly string[]).includes(value)) this.format = value as ResultFormat;
    else {
      this.format = "default";
      // The value comes from the environment: shown as one inert, bounded line.
      this.warning = `${FORMAT_ENV}="${metadataLine(raw!.slice(0, 40))}" is not a known result format (use codex or default); the default format is used.`;
    }
  }

  /** The warning for the session-start notice; told once. */
  takeStartWarning(): string | undefined {
    return this.take();
  }

  /** The warning for a result's `notice`, only where Pi drops notices (print and JSON runs); told once. */
  takeResultWarning(mode: string): string | undefined {
    return mode === "print" || mode === "json" ? this.take() : undefined;
  }

  private take(): string | undefined {
    const warning = this.warning;
    this.warning = undefined;
    return warning;
  }
}

/** Where Pi shows notices (TUI, RPC), the first session start warns about a format value we did not know. */
export function registerFormatNotice(pi: ExtensionAPI, setting: ResultFormatSetting): void {
  pi.on("session_start", async (_event, ctx) => {
    if (ctx.mode === "print" || ctx.mode === "json") return;
    const warning = setting.takeStartWarning();
    if (warning) ctx.ui.notify(`pi-unified-exec: ${warning}`, "warning");
  });
}
