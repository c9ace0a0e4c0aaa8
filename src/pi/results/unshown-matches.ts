import type { ReadMatchList } from "../../core/index.ts";
import { oneLine } from "./format.ts";

/** The header field, whole, stays within this many characters. */
const UNSHOWN_FIELD_CHARS = 300;

/**
 * `pattern_matched_unshown`: the lines of this read that match the job's `wake_on_pattern` and that
 * the result does not show. Pi's cap keeps the last `shownLines` of the `printedLines` the job
 * printed for this call (lines retention dropped are among those before them); Codex's text also
 * keeps the first `shownHeadLines`. Such a line is the call's to report: it never wakes later.
 * Undefined when every matching line is shown. The first matching line is quoted only when it is
 * one of those not shown.
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
