import { formatSize, type TruncationResult } from "@earendil-works/pi-coding-agent";
import type { FooterWriter } from "./token-budget.ts";

/**
 * The footer that replaces what the model cap cut, counted against what the job printed since the
 * previous call, not against what the retention buffer kept: a flood of 2 000 000 lines reads
 * `[Showing the last 2000 of 2000000 lines (14.9 MB; 14.9 MB not shown). Full output: <log>]`, where a
 * count of the kept megabyte would claim the job printed 150 000. Worded after Pi's bash footers; what
 * was printed and not shown is in decimal megabytes as the product contract writes them, Pi's own
 * phrases (`50.0KB limit`, `Showing last 50.0KB of line`) keep Pi's `formatSize`. Also the TUI's
 * one-line summary of the same cut. Formatting only: the caller decides that something was cut and
 * supplies the counts.
 */

/** A printed amount in decimal units with a space: `14.9 MB`, `512 B`. */
export function printedSize(bytes: number): string {
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

/** What the job printed since the previous call. */
export interface Printed {
  /** Lines, counted like Pi's `truncateTail` (a final line without a newline counts; a trailing newline adds none), including lines in bytes retention dropped. */
  lines: number;
  /** Bytes, including the bytes retention dropped (the log holds them all). */
  bytes: number;
  /** Size of the last line, when only its end is shown (Pi's partial-line case) and the size is known. */
  lastLineBytes?: number | undefined;
}

/** What the model is shown of it. */
export interface Shown {
  /** Lines shown (a partial line counts as one). */
  lines: number;
  /** Bytes shown. */
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

/** The last line's part of a partial-line footer: `(line is 3.1 MB)`, plus the totals when more than that line was printed. */
function partialLineDetail(printed: Printed, notShown: string, totalBytes: number): string {
  const parts: string[] = [];
  if (printed.lastLineBytes !== undefined) parts.push(`line is ${printedSize(printed.lastLineBytes)}`);
  if (printed.lastLineBytes === undefined || totalBytes > printed.lastLineBytes)
    parts.push(`${printedSize(totalBytes)} printed, ${notShown} not shown`);
  return parts.join("; ");
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
    return `[Showing last ${formatSize(shown.bytes)} of line ${totalLines} (${partialLineDetail(printed, notShown, totalBytes)}). Full output: ${logPath}]`;
  }
  const limit = shown.limitBytes !== undefined ? `; ${formatSize(shown.limitBytes)} limit` : "";
  return `[Showing the last ${shown.lines} of ${totalLines} lines (${printedSize(totalBytes)}; ${notShown} not shown${limit}). Full output: ${logPath}]`;
}

/** A {@link FooterWriter} for `capOutputToBudget` that counts what the job printed. */
export function truncationFooterWriter(printed: Printed, logPath: string): FooterWriter {
  return (truncation) => truncationFooter(printed, shownBy(truncation), logPath);
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
