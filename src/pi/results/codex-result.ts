import type { Elision, JobReport } from "../../core/index.ts";
import { codexShownLines } from "./codex-shown.ts";
import { codexByteBudget, codexNotes, codexResultParts, withCodexOmission } from "./codex-text.ts";
import { codexLineCount } from "./codex-truncate.ts";
import type { KilledBy } from "./job-fields.ts";
import type { OutputCut } from "./lean-header.ts";
import type { Printed } from "./truncation-footer.ts";
import { unshownMatches } from "./unshown-matches.ts";

/**
 * A job result's model text in Codex's own format (`PI_UNIFIED_EXEC_FORMAT=codex`): Codex's header
 * and truncation from `codex-text.ts`, fed from the same fields as our format, so `structuredContent`
 * and `details` stay the same whichever text the model reads. Also where the output sits in that
 * text, for the renderer.
 */

/** The fields of a result the Codex text reads. */
export interface CodexFields {
  chunk_id: string;
  original_token_count: number;
  failure_message?: string | undefined;
  killed_by?: KilledBy | undefined;
  warning?: string | undefined;
  notice?: string | undefined;
  completion_notification?: string | undefined;
  shell_exit_code?: number | null | undefined;
  background?: string | undefined;
  user_input?: string | undefined;
  user_disarmed?: ("exit_wake" | "wake_on_pattern")[] | undefined;
}

type Source = { text: string; printed: Printed; omittedBytes: number; elided?: Elision | undefined };

/** `pattern_matched_unshown` for Codex's text: matching lines outside the head and tail it shows. */
function codexUnshown(report: JobReport, source: Source, maxOutputTokens: number | undefined): string | undefined {
  if (report.screen || !report.output.matched) return undefined;
  const text = withCodexOmission(source.text, source.omittedBytes);
  const shown = codexShownLines(text, source.omittedBytes, codexByteBudget(maxOutputTokens), source.elided?.bytes ?? 0);
  return shown ? unshownMatches(report.output.matched, source.printed.lines, shown.tail, shown.head) : undefined;
}

/** The shell's exit and what it left running, when that is news (as in our format's header). */
function shellNews(report: JobReport, fields: CodexFields): { code: number | null; background?: string | undefined } | undefined {
  if (!report.backgroundChanged || fields.shell_exit_code === undefined) return undefined;
  if (!fields.background && report.job.exit) return undefined; // the exit line says it all
  return { code: fields.shell_exit_code, background: fields.background };
}

/** `source`: what the call shows (the stream, or a PTY job's screen) and what it counts as printed. */
export function codexJobText(
  report: JobReport,
  source: Source,
  extras: { maxOutputTokens?: number | undefined; hint?: string | undefined },
  fields: CodexFields,
) {
  const exit = report.job.exit;
  const omittedBytes = source.omittedBytes;
  const unshown = codexUnshown(report, source, extras.maxOutputTokens);
  const parts = codexResultParts({
    chunkId: fields.chunk_id,
    wallMs: report.wallMs,
    // Our value, as in the default format: 128 + n for a death by signal n (docs/decisions.md#codexs-format); -1 when there is no code.
    ...(exit ? { exitCode: exit.exitCode } : { sessionId: report.job.jobId }),
    output: source.text,
    originalTokenCount: fields.original_token_count,
    maxOutputTokens: extras.maxOutputTokens,
    omittedBytes,
    undecoded: source.elided ? { bytes: source.elided.bytes, totalLines: source.printed.lines } : undefined,
    notes: codexNotes({
      failureMessage: fields.failure_message,
      killedBy: fields.killed_by,
      cancelled: report.cancelled,
      warning: fields.warning,
      notice: fields.notice,
      completion: fields.completion_notification,
      hint: extras.hint,
      shellExit: shellNews(report, fields),
      userInput: fields.user_input,
      userDisarmed: fields.user_disarmed,
      unshown,
    }),
  });
  const start = parts.header.length + 1 + parts.notes.length;
  const overBudget = Buffer.byteLength(source.text) + (source.elided?.bytes ?? 0) > codexByteBudget(extras.maxOutputTokens);
  const cut: OutputCut | undefined =
    overBudget || omittedBytes > 0
      ? {
          printed: source.printed,
          shownBytes: Buffer.byteLength(parts.output),
          shownLines: codexLineCount(parts.output),
          truncatedBy: overBudget ? "tokens" : "retention",
        }
      : undefined;
  return {
    text: `${parts.header}\n${parts.notes}${parts.output}`,
    output: parts.output,
    outputAt: [start, start + parts.output.length] as [number, number],
    cut,
    unshown,
  };
}
