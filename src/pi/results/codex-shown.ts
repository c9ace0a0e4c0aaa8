import { newlinesIn } from "../../core/index.ts";
import { codexOmissionMarker, cutSpan } from "./codex-truncate.ts";

/**
 * Which lines of a call's output Codex's text shows whole, for `pattern_matched_unshown`: the first
 * `head` lines of the read and its last `tail` lines. Codex's text keeps a head and a tail of the
 * output (its middle cut, and the middle the retention dropped); a line cut in two counts as not
 * shown, and so does the first line after the retention's gap (where that line starts is not known).
 */
export interface ShownLines {
  head: number;
  tail: number;
}

/** Line ends in `bytes`, plus an unfinished last line: lines as the read's tally counts them. */
function linesIn(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  return newlinesIn(bytes) + (bytes[bytes.length - 1] === 0x0a ? 0 : 1);
}

/**
 * The lines Codex's text shows of `text` (the output with Codex's omission line where retention
 * dropped `omittedBytes`, and `undecodedBytes` of a middle the runtime never decoded), cut to
 * `budgetBytes`; undefined when it shows every line.
 */
export function codexShownLines(text: string, omittedBytes: number, budgetBytes: number, undecodedBytes = 0): ShownLines | undefined {
  const bytes = Buffer.from(text, "utf8");
  const over = bytes.length + undecodedBytes > budgetBytes;
  if (!over && omittedBytes <= 0) return undefined;
  const span = over ? cutSpan(bytes, Math.max(0, budgetBytes)) : { headEnd: bytes.length, tailStart: 0 };
  // The retention's gap: what comes before its line is the read's start, what follows is its end.
  let before = bytes.length;
  let after = 0;
  if (omittedBytes > 0) {
    const line = Buffer.from(`\n${codexOmissionMarker(omittedBytes)}\n`);
    const at = bytes.indexOf(line);
    before = at === -1 ? 0 : at;
    after = at === -1 ? 0 : at + line.length;
  }
  // Complete lines only: an unfinished last line of the head is cut, not shown whole.
  const head = newlinesIn(bytes, 0, Math.min(span.headEnd, before));
  const tailAt = Math.max(span.tailStart, after);
  const tailBytes = bytes.subarray(tailAt);
  const afterGap = omittedBytes > 0 && tailAt === after;
  const startsLine = !afterGap && (tailAt === 0 || bytes[tailAt - 1] === 0x0a);
  const tail = linesIn(tailBytes) - (startsLine || tailBytes.length === 0 ? 0 : 1);
  return { head, tail };
}
