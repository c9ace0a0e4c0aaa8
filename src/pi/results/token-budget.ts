import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult, truncateTail } from "@earendil-works/pi-coding-agent";
import { APPROX_BYTES_PER_TOKEN } from "../../core/index.ts";
import type { CappedOutput } from "./format.ts";

/**
 * `max_output_tokens` for our default format: the model may ask for less output than the usual
 * cap (Pi's 50 KiB / 2 000 lines), at Codex's estimate of 4 bytes a token, never for more. The cut is
 * Pi's `truncateTail`, as for the usual cap, so the model reads the end of the output either way.
 * The budget is for the output: the header and the footer come on top, as in Codex.
 */

/** Bytes of output a call may show: 4 × `maxOutputTokens`, never above 50 KiB; the usual cap without a budget. */
export function outputByteBudget(maxOutputTokens?: number): number {
  if (maxOutputTokens === undefined || !Number.isFinite(maxOutputTokens)) return DEFAULT_MAX_BYTES;
  return Math.min(DEFAULT_MAX_BYTES, Math.max(1, Math.floor(maxOutputTokens)) * APPROX_BYTES_PER_TOKEN);
}

/** Writes the footer for a cut: gets Pi's result and the byte limit that applied. */
export type FooterWriter = (truncation: TruncationResult, limitBytes: number) => string;

/**
 * Pi's bash footer for a cut, with the limit that applied (`(4.0KB limit)` under a small budget;
 * `(50.0KB limit)` without one, word for word Pi's bash tool). Results pass their own footer, which
 * counts what the job printed; this one is the default, and the benchmark's model of Pi's bash tool.
 */
export function piFooter(text: string, logPath: string): FooterWriter {
  return (truncation, limitBytes) => {
    const endLine = truncation.totalLines;
    const startLine = endLine - truncation.outputLines + 1;
    if (truncation.lastLinePartial) {
      const lastLine = text.slice(text.lastIndexOf("\n", text.length - 2) + 1);
      return `[Showing last ${formatSize(truncation.outputBytes)} of line ${endLine} (line is ${formatSize(Buffer.byteLength(lastLine))}). Full output: ${logPath}]`;
    }
    if (truncation.truncatedBy === "lines")
      return `[Showing lines ${startLine}-${endLine} of ${truncation.totalLines}. Full output: ${logPath}]`;
    return `[Showing lines ${startLine}-${endLine} of ${truncation.totalLines} (${formatSize(limitBytes)} limit). Full output: ${logPath}]`;
  };
}

/**
 * The cap on a result's output, with the model's `max_output_tokens`: keeps the last 2 000 lines
 * within {@link outputByteBudget} bytes (Pi's 50 KiB without a budget) and appends a footer when
 * something was cut (Pi's wording by default; pass `footer` for another, e.g. `truncationFooter`
 * with the job's real counts).
 */
export function capOutputToBudget(text: string, logPath: string, maxOutputTokens?: number, footer?: FooterWriter): CappedOutput {
  const limitBytes = outputByteBudget(maxOutputTokens);
  const truncation = truncateTail(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: limitBytes });
  if (!truncation.truncated) return { shown: text, content: truncation.content, truncation };
  const write = footer ?? piFooter(text, logPath);
  return { shown: `${truncation.content}\n\n${write(truncation, limitBytes)}`, content: truncation.content, truncation };
}
