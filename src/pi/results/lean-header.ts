import { resolve } from "node:path";
import type { JobReport } from "../../core/index.ts";
import { printedOf } from "./output-cap.ts";

/**
 * The lean header's rules: which fields carry news in this call's text. The model pays for every
 * header token on every call, so a field it already knows (its own `cwd`, a log path it was given,
 * the terminal size it asked for) stays out of the text; `structuredContent` and `details` keep
 * every field. A field not named here is in the text whenever it is set.
 */

/** The facts of one call that decide what its text carries. */
export interface TextFacts {
  /** The job's first result: the model has not been given its log path yet. */
  first: boolean;
  /** The output was cut (by the cap or a budget) or retention dropped part of it. */
  cut: boolean;
  exited: boolean;
  /** Still running and this call read something (a cancelled call is neither). */
  running: boolean;
  /** The job printed nothing for this call. */
  printedNothing: boolean;
  /** The job runs somewhere else than Pi's working directory. */
  cwdDiffers: boolean;
  /** A resize, or a clamp of the size the model asked for, changed the terminal size. */
  sizeChanged: boolean;
  logPartial: boolean;
  /** The listening addresses differ from what the job's previous result showed. */
  listeningChanged: boolean;
  /** The job's memory changed noticeably since its previous result showed it. */
  usageChanged: boolean;
  /** What the exited shell left running differs from what the job's previous result named. */
  backgroundChanged: boolean;
}

export function textFacts(
  report: JobReport,
  call: {
    status: "running" | "exited" | "cancelled";
    truncated: boolean;
    /** Bytes retention dropped from what this call shows (0 for a screen, which replaces the stream). */
    omittedBytes: number;
    piCwd: string | undefined;
    resized: boolean | undefined;
  },
): TextFacts {
  const terminal = report.terminal;
  return {
    first: report.job.outputReads <= 1,
    cut: call.truncated || call.omittedBytes > 0,
    exited: report.job.exit !== undefined,
    running: call.status === "running",
    printedNothing: printedOf(report.output).bytes === 0,
    // Without Pi's directory (a caller outside a tool) the text keeps cwd: better said twice than never.
    cwdDiffers: call.piCwd === undefined || resolve(call.piCwd) !== report.job.cwd,
    sizeChanged: call.resized === true || terminal?.requestedCols !== undefined || terminal?.requestedRows !== undefined,
    logPartial: report.job.logPartialReason !== undefined,
    listeningChanged: report.listeningChanged === true,
    usageChanged: report.usageChanged === true,
    backgroundChanged: report.backgroundChanged === true,
  };
}

const NEWS: Record<string, (facts: TextFacts) => boolean> = {
  // Given once, then again whenever the model may need the log: output it did not see, or the end.
  log_path: (f) => f.first || f.cut || f.exited || f.logPartial,
  cwd: (f) => f.cwdDiffers,
  original_token_count: (f) => f.cut,
  // Output says the job is alive; silence is what the model needs a number for.
  quiet_ms: (f) => f.running && f.printedNothing,
  // The lean header stays lean: the addresses are said when they change (structuredContent always has them).
  listening: (f) => f.listeningChanged,
  listening_lost: (f) => f.listeningChanged,
  // Memory and CPU time when the memory moved noticeably (±100 MB, doubled, halved).
  memory_mb: (f) => f.usageChanged,
  cpu_seconds: (f) => f.usageChanged,
  // Said when the shell exits leaving processes running, and again only when that set changes.
  shell_exit_code: (f) => f.backgroundChanged,
  background: (f) => f.backgroundChanged,
  cols: (f) => f.sizeChanged,
  rows: (f) => f.sizeChanged,
};

/** Whether field `key` belongs in this call's text (fields without a rule do whenever they are set). */
export function carriesNews(key: string, facts: TextFacts): boolean {
  return NEWS[key]?.(facts) ?? true;
}

/** What the text says beside the fields, or says differently: written for the model, never in `structuredContent`. */
export interface TextOnly {
  /** Bytes of the model's own input the job's stdin took (`input: 6 bytes sent`). */
  sentBytes?: number | undefined;
  /** The window, with what the model asked when it was clamped (`yield_time_ms: 45000 → 30000`). */
  window: { ms: number; requestedMs?: number | undefined };
  /** Guidance just in time (see `guidance/hints.ts`). */
  hint?: string | undefined;
}

/**
 * The header's fields with the text's own words: `input: bytes` says how many were sent, a clamped
 * window says what was asked and what was used (right after `wall_time_seconds`), and the hint comes last.
 */
export function inTextWords(fields: Record<string, unknown>, extra: TextOnly): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const sent = extra.sentBytes;
  for (const [key, value] of Object.entries(fields)) {
    out[key] = key === "input" && value === "bytes" && sent !== undefined ? `${sent} byte${sent === 1 ? "" : "s"} sent` : value;
    if (key === "wall_time_seconds" && extra.window.requestedMs !== undefined)
      out.yield_time_ms = `${extra.window.requestedMs} → ${extra.window.ms}`;
  }
  if (extra.hint) out.hint = extra.hint;
  return out;
}
