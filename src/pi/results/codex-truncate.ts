import { APPROX_BYTES_PER_TOKEN } from "../../core/index.ts";

/**
 * Codex's output truncation, reproduced byte for byte so a model trained on Codex reads the marks it
 * knows: the 4-bytes-a-token estimate, the head-and-tail cut with `…N tokens truncated…` in the
 * middle, the `Warning: truncated output …` / `Total output lines: …` preamble, and the form used
 * when the 1 MiB retention buffer already dropped bytes. Sizes are UTF-8 bytes, as in Codex; every
 * cut falls on a character boundary. Pure functions; nothing here knows about jobs.
 */

/** Codex's estimate: ceil(bytes / 4). */
export function tokensForBytes(bytes: number): number {
  return bytes <= 0 ? 0 : Math.ceil(bytes / APPROX_BYTES_PER_TOKEN);
}

/** Codex's estimate of `text`: ceil(UTF-8 bytes / 4). */
export function approxTokenCount(text: string): number {
  return tokensForBytes(Buffer.byteLength(text, "utf8"));
}

/** Bytes a budget of `tokens` allows (4 a token). */
export function bytesForTokens(tokens: number): number {
  return Math.max(0, tokens) * APPROX_BYTES_PER_TOKEN;
}

/**
 * Lines as Rust's `str::lines()` counts them (Codex's `Total output lines`): a line ends at LF, a
 * final line without LF counts, and a trailing LF does not start another line.
 */
export function codexLineCount(text: string): number {
  if (text === "") return 0;
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return text.endsWith("\n") ? count : count + 1;
}

/** The mark Codex puts where it removed the middle: tokens for a token budget, characters for a byte budget. */
export type CutUnit = "tokens" | "chars";

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** Characters (code points) in a stretch of valid UTF-8: every byte that is not a continuation byte starts one. */
function charsIn(bytes: Buffer, start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i++) if (!isContinuation(bytes[i])) count++;
  return count;
}

/**
 * Keeps the start and the end of `text` within `maxBytes` (half each) and joins them with Codex's
 * mark `…N tokens truncated…` (N = ceil(bytes over budget / 4)) or `…N chars truncated…` (N = the
 * characters removed). No separator around the mark, as in Codex. A budget of 0 leaves the mark
 * alone; text within budget comes back unchanged. `undecodedBytes`: output the runtime left out of
 * `text` because this cut removes it anyway (its middle, see core output-decoder.ts); it counts as raw
 * bytes, tokens only.
 */
export function middleCut(text: string, maxBytes: number, unit: CutUnit = "tokens", undecodedBytes = 0): string {
  if (text === "") return "";
  const bytes = Buffer.from(text, "utf8");
  const total = bytes.length + undecodedBytes;
  const mark = (count: number) => `…${count} ${unit} truncated…`;
  if (maxBytes <= 0) return mark(unit === "tokens" ? tokensForBytes(total) : charsIn(bytes, 0, total));
  if (total <= maxBytes) return text;
  const { headEnd, tailStart } = cutSpan(bytes, maxBytes);
  const removed = unit === "tokens" ? tokensForBytes(total - maxBytes) : charsIn(bytes, headEnd, tailStart);
  return `${bytes.subarray(0, headEnd).toString("utf8")}${mark(removed)}${bytes.subarray(tailStart).toString("utf8")}`;
}

/**
 * Where {@link middleCut} cuts `bytes` (UTF-8) over a budget of `maxBytes`: the head is
 * `[0, headEnd)` and the tail `[tailStart, end)`. The head ends at the last character boundary at or
 * before half the budget; the tail starts at the first boundary at or after the other half from the end.
 */
export function cutSpan(bytes: Buffer, maxBytes: number): { headEnd: number; tailStart: number } {
  const left = Math.floor(maxBytes / 2);
  const right = maxBytes - left;
  let headEnd = left;
  while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd--;
  let tailStart = bytes.length - right;
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart++;
  if (tailStart < headEnd) tailStart = headEnd;
  return { headEnd, tailStart };
}

/** A middle of the output the runtime did not decode (the cut removes it): its raw bytes and the lines of the whole output. */
export interface Undecoded {
  bytes: number;
  totalLines: number;
}

/**
 * Codex's `formatted_truncate_text` for a token budget: unchanged within `4 × maxTokens` bytes;
 * otherwise `Warning: truncated output (original token count: T)`, `Total output lines: L`, a blank
 * line, and the middle cut. With an {@link Undecoded} middle, T and L count it raw, as Codex counts
 * its own undecoded text.
 */
export function formattedTruncate(text: string, maxTokens: number, undecoded?: Undecoded): string {
  const budget = bytesForTokens(maxTokens);
  const size = Buffer.byteLength(text, "utf8") + (undecoded?.bytes ?? 0);
  if (size <= budget) return text;
  return (
    `Warning: truncated output (original token count: ${tokensForBytes(size)})\n` +
    `Total output lines: ${undecoded?.totalLines ?? codexLineCount(text)}\n\n${middleCut(text, budget, "tokens", undecoded?.bytes)}`
  );
}

/** Codex's retention mark, `... K bytes omitted ...` (its 1 MiB buffer puts it on a line of its own). */
export function codexOmissionMarker(omittedBytes: number): string {
  return `... ${omittedBytes} bytes omitted ...`;
}

/**
 * Codex's output for a call whose retention buffer dropped `omittedBytes` (`truncated_output_with_policy`):
 * the text keeps its `... K bytes omitted ...` line (added in front if the text lacks it); over the
 * budget it becomes `Warning: truncated output (original token count: T)` with T the call's own count
 * (omitted bytes included), the omission line again if the cut removed it, a blank line, and the
 * middle cut. Codex prints no `Total output lines` here.
 */
export function truncateWithOmission(
  text: string,
  omittedBytes: number,
  maxTokens: number,
  originalTokenCount: number,
  undecodedBytes = 0,
): string {
  const marker = codexOmissionMarker(omittedBytes);
  const budget = bytesForTokens(maxTokens);
  if (Buffer.byteLength(text, "utf8") + undecodedBytes <= budget) return text.includes(marker) ? text : `${marker}\n${text}`;
  const cut = middleCut(text, budget, "tokens", undecodedBytes);
  const notice = cut.includes(marker) ? "" : `${marker}\n`;
  return `Warning: truncated output (original token count: ${originalTokenCount})\n${notice}\n${cut}`;
}
