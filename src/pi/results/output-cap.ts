import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult, truncateTail } from "@earendil-works/pi-coding-agent";
import type { JobReport, ReadMatchList } from "../../core/index.ts";
import { oneLine } from "./format.ts";

/**
 * The cap on a result's output in our format and what the result says of it. The cap is Pi's
 * `truncateTail`: the last 2 000 lines within 50 KiB, or within 4 bytes per `max_output_tokens`
 * (never more; the header and the footer come on top, as in Codex). The footer counts what the job
 * printed since the previous call, dropped bytes included, not what retention kept: a flood of
 * 2 000 000 lines reads `[Showing the last 2000 of 2000000 lines (14.9 MB; 14.9 MB not shown). Full
 * output: <log>]`, where a count of the kept megabyte would claim 150 000. Printed sizes are decimal
 * with a space, as the product contract writes them; Pi's own phrases (`50.0KB limit`, `Showing last
 * 50.0KB of line`) keep Pi's `formatSize`.
 */

/** Codex's token estimate, which `max_output_tokens` and `original_token_count` use: one token per 4 bytes of UTF-8, rounded up. */
export const APPROX_BYTES_PER_TOKEN = 4;

/** A printed amount in decimal units with a space: `14.9 MB`, `512 B`. */
function printedSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 999.95 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Lines as Pi's `truncateTail` and Rust's `str::lines()` (Codex's `Total output lines`) count them: an unfinished last line counts, a trailing LF adds none. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return text.endsWith("\n") ? count : count + 1;
}

/** What the job printed since the previous call. */
export interface Printed {
  /** Lines, counted as {@link lineCount} does, lines in bytes retention dropped included. */
  lines: number;
  /** Bytes, including the bytes retention dropped (the log holds them all). */
  bytes: number;
  /** Size of the last line, when only its end is shown (Pi's partial-line case) and the size is known. */
  lastLineBytes?: number | undefined;
}

/** What the job printed for the report's call: the core's raw count, else the text's (plus the dropped bytes). */
export function printedOf(output: Pick<JobReport["output"], "text" | "omittedBytes" | "printed">): Printed {
  if (output.printed) return output.printed;
  return { bytes: Buffer.byteLength(output.text) + output.omittedBytes, lines: lineCount(output.text) };
}

/** What the model is shown of it. */
export interface Shown {
  /** Lines shown (a partial line counts as one). */
  lines: number;
  bytes: number;
  /** Only the end of the last line is shown: it alone is longer than the limit. */
  lastLinePartial: boolean;
  /** The byte limit, when bytes rather than lines were the limit. */
  limitBytes?: number | undefined;
}

/** What Pi's `truncateTail` kept, as {@link Shown}. */
export function shownBy(truncation: TruncationResult): Shown {
  return {
    lines: truncation.outputLines,
    bytes: truncation.outputBytes,
    lastLinePartial: truncation.lastLinePartial,
    ...(truncation.truncatedBy === "bytes" ? { limitBytes: truncation.maxBytes } : {}),
  };
}

/** Bytes printed and not shown (never negative). */
export function notShownBytes(printed: Printed, shown: Shown): number {
  return Math.max(0, printed.bytes - shown.bytes);
}

/**
 * The footer line (without the blank line before it): `[Showing the last S of P lines (B; N not
 * shown). Full output: <log>]`, `…; 50.0KB limit)` when bytes were the limit, or for a last line
 * longer than the limit, Pi's `[Showing last X of line P (line is L; B printed, N not shown). Full
 * output: <log>]`.
 */
export function truncationFooter(printed: Printed, shown: Shown, logPath: string): string {
  // Counts that disagree (a caller that missed a line) must not produce "the last 5 of 3".
  const totalLines = Math.max(printed.lines, shown.lines);
  const totalBytes = Math.max(printed.bytes, shown.bytes);
  const notShown = printedSize(notShownBytes(printed, shown));
  if (shown.lastLinePartial) {
    const parts: string[] = [];
    if (printed.lastLineBytes !== undefined) parts.push(`line is ${printedSize(printed.lastLineBytes)}`);
    if (printed.lastLineBytes === undefined || totalBytes > printed.lastLineBytes)
      parts.push(`${printedSize(totalBytes)} printed, ${notShown} not shown`);
    return `[Showing last ${formatSize(shown.bytes)} of line ${totalLines} (${parts.join("; ")}). Full output: ${logPath}]`;
  }
  const limit = shown.limitBytes !== undefined ? `; ${formatSize(shown.limitBytes)} limit` : "";
  return `[Showing the last ${shown.lines} of ${totalLines} lines (${printedSize(totalBytes)}; ${notShown} not shown${limit}). Full output: ${logPath}]`;
}

/** The TUI row's note on the same cut: `14.9 MB not shown, full output in the log`. */
export function notShownSummary(printed: Printed, shown: Shown): string {
  return `${printedSize(notShownBytes(printed, shown))} not shown, full output in the log`;
}

/** The TUI row's flag from a result's `details.truncation` (read defensively: details come from the session file). */
export function notShownNote(cut: unknown): string[] {
  const { printed, shownBytes, shownLines } = (cut ?? {}) as {
    printed?: { bytes?: unknown; lines?: unknown };
    shownBytes?: unknown;
    shownLines?: unknown;
  };
  if (typeof printed?.bytes !== "number" || typeof shownBytes !== "number") return [];
  const lines = typeof printed.lines === "number" ? printed.lines : 0;
  return [notShownSummary({ bytes: printed.bytes, lines }, { bytes: shownBytes, lines: Number(shownLines) || 0, lastLinePartial: false })];
}

/** Bytes of output a call may show: 4 × `maxOutputTokens`, never above 50 KiB; the usual cap without a budget. */
export function outputByteBudget(maxOutputTokens?: number): number {
  if (maxOutputTokens === undefined || !Number.isFinite(maxOutputTokens)) return DEFAULT_MAX_BYTES;
  return Math.min(DEFAULT_MAX_BYTES, Math.max(1, Math.floor(maxOutputTokens)) * APPROX_BYTES_PER_TOKEN);
}

/** Output capped: what the model sees (the kept end, and the footer when something was cut), the kept end alone, and Pi's account of the cut. */
export interface CappedOutput {
  shown: string;
  content: string;
  truncation: TruncationResult;
}

/** `text` capped to the last 2 000 lines within {@link outputByteBudget}, with the footer of what the job `printed` when something was cut. */
export function capOutput(text: string, printed: Printed, logPath: string, maxOutputTokens?: number): CappedOutput {
  const truncation = truncateTail(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: outputByteBudget(maxOutputTokens) });
  if (!truncation.truncated) return { shown: text, content: truncation.content, truncation };
  const footer = truncationFooter(printed, shownBy(truncation), logPath);
  return { shown: `${truncation.content}\n\n${footer}`, content: truncation.content, truncation };
}

/** How the cap (or only retention) cut a call's output, for `details` (the TUI says how much the model was not shown). */
export interface OutputCut {
  /** What the job printed for this call, dropped bytes included. */
  printed: Printed;
  /** What the model was shown of it. */
  shownBytes: number;
  shownLines: number;
  /** What cut it: the line cap, the byte cap (or a `max_output_tokens` budget), Codex's token budget, or only retention between reads. */
  truncatedBy: "lines" | "bytes" | "tokens" | "retention";
}

export function outputCut(printed: Printed, truncation: TruncationResult): OutputCut {
  return {
    printed,
    shownBytes: truncation.outputBytes,
    shownLines: truncation.outputLines,
    truncatedBy: truncation.truncatedBy ?? "retention",
  };
}

/** The header field `pattern_matched_unshown`, whole, stays within this many characters. */
const UNSHOWN_FIELD_CHARS = 300;

/**
 * `pattern_matched_unshown`: the lines of this read that match the job's `wake_on_pattern` and that
 * the result does not show. The cap keeps the last `shownLines` of the `printedLines` the job printed
 * for this call (lines retention dropped are among those before them); Codex's text also keeps the
 * first `shownHeadLines`. Such a line is the call's to report: it never wakes later. Undefined when
 * every matching line is shown; the first matching line is quoted only when it is not shown.
 */
export function unshownMatches(
  matched: ReadMatchList | undefined,
  printedLines: number,
  shownLines: number,
  shownHeadLines = 0,
): string | undefined {
  if (!matched) return undefined;
  const firstShown = printedLines - shownLines;
  const unshown = (line: number) => line >= shownHeadLines && line < firstShown;
  // Matches past the numbered ones follow the last of them: unshown when it is.
  const last = matched.lines.at(-1);
  const count = matched.lines.filter(unshown).length + (last !== undefined && unshown(last) ? matched.more : 0);
  if (count === 0) return undefined;
  const lines = `${count} line${count === 1 ? "" : "s"}`;
  if (!unshown(matched.lines[0]!)) return lines;
  const head = `${lines}, first: `;
  return `${head}${oneLine(matched.first, UNSHOWN_FIELD_CHARS - "pattern_matched_unshown: ".length - head.length - 1)}`;
}
