import type { Elision, JobReport } from "../../core/index.ts";
import { codexByteBudget, codexNotes, codexResultParts } from "./codex-text.ts";
import { codexLineCount } from "./codex-truncate.ts";
import type { KilledBy } from "./job-fields.ts";
import type { OutputCut } from "./lean-header.ts";
import type { Printed } from "./truncation-footer.ts";

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
}

/** `source`: what the call shows (the stream, or a PTY job's screen) and what it counts as printed. */
export function codexJobText(
  report: JobReport,
  source: { text: string; printed: Printed; omittedBytes: number; elided?: Elision | undefined },
  extras: { maxOutputTokens?: number | undefined; hint?: string | undefined },
  fields: CodexFields,
) {
  const exit = report.job.exit;
  const omittedBytes = source.omittedBytes;
  const parts = codexResultParts({
    chunkId: fields.chunk_id,
    wallMs: report.wallMs,
    // Our value, as in the default format: 128 + the signal number for a death by signal (docs/decisions.md); -1 only when there is no code.
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
  };
}
