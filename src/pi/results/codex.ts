import { randomBytes } from "node:crypto";
import { type Elision, type JobReport, metadataLine, newlinesIn, omissionMarker } from "../../core/index.ts";
import type { KilledBy } from "./job-fields.ts";
import { APPROX_BYTES_PER_TOKEN, lineCount, type OutputCut, type Printed, unshownMatches } from "./output-cap.ts";

/**
 * The text of `exec_command` and `write_stdin` results in Codex's own format
 * (`PI_UNIFIED_EXEC_FORMAT=codex`), fed from the same fields as our format, so `structuredContent`
 * and `details` stay the same whichever text the model reads. Codex's header and truncation are
 * reproduced byte for byte (the 4-bytes-a-token estimate, the head-and-tail cut with `…N tokens
 * truncated…`, the `Warning: truncated output …` preamble, the form used when retention dropped
 * bytes); the few facts the model must not miss travel as `Warning:` lines at the top of the output.
 * Sizes are UTF-8 bytes, as in Codex; every cut falls on a character boundary.
 */

/**
 * Codex's output budget without `max_output_tokens` (`DEFAULT_MAX_OUTPUT_TOKENS`), and its cap on a
 * larger one: the models trained on this tool have a truncation policy of 10 000 tokens.
 */
const CODEX_MAX_OUTPUT_TOKENS = 10_000;

// ---- Codex's truncation ----

/** Codex's estimate: ceil(bytes / 4). */
export function tokensForBytes(bytes: number): number {
  return bytes <= 0 ? 0 : Math.ceil(bytes / APPROX_BYTES_PER_TOKEN);
}

/** Bytes a budget of `tokens` allows (4 a token). */
function bytesForTokens(tokens: number): number {
  return Math.max(0, tokens) * APPROX_BYTES_PER_TOKEN;
}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * Keeps the start and the end of `text` within `maxBytes` (half each) and joins them with Codex's
 * mark `…N tokens truncated…` (N = ceil(bytes over budget / 4)), with no separator, as in Codex. A
 * budget of 0 leaves the mark alone; text within budget comes back unchanged. `undecodedBytes`:
 * output the runtime left out of `text` because this cut removes it anyway (core output-decoder.ts),
 * counted as raw bytes.
 */
export function middleCut(text: string, maxBytes: number, undecodedBytes = 0): string {
  if (text === "") return "";
  const bytes = Buffer.from(text, "utf8");
  const total = bytes.length + undecodedBytes;
  if (maxBytes <= 0) return `…${tokensForBytes(total)} tokens truncated…`;
  if (total <= maxBytes) return text;
  const { headEnd, tailStart } = cutSpan(bytes, maxBytes);
  return `${bytes.subarray(0, headEnd).toString("utf8")}…${tokensForBytes(total - maxBytes)} tokens truncated…${bytes.subarray(tailStart).toString("utf8")}`;
}

/**
 * Where {@link middleCut} cuts `bytes` (UTF-8) over a budget of `maxBytes`: the head is
 * `[0, headEnd)` and the tail `[tailStart, end)`. The head ends at the last character boundary at or
 * before half the budget; the tail starts at the first boundary at or after the other half from the end.
 */
function cutSpan(bytes: Buffer, maxBytes: number): { headEnd: number; tailStart: number } {
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
    `Total output lines: ${undecoded?.totalLines ?? lineCount(text)}\n\n${middleCut(text, budget, undecoded?.bytes)}`
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
  const cut = middleCut(text, budget, undecodedBytes);
  const notice = cut.includes(marker) ? "" : `${marker}\n`;
  return `Warning: truncated output (original token count: ${originalTokenCount})\n${notice}\n${cut}`;
}

// ---- The text: header, notes, output ----

export interface CodexResultInput {
  /** Six lowercase hex digits, new on every call ({@link codexChunkId}). */
  chunkId: string;
  /** Time this call spent attached to the job. */
  wallMs: number;
  /** Set once the job has exited; `null` (no exit code, e.g. never started) reads -1, as Codex reports a missing code. */
  exitCode?: number | null;
  /** Set while the job runs. */
  sessionId?: number;
  /**
   * This call's output as the runtime delivers it: decoded, not yet capped, with our retention
   * marker where bytes were dropped (it is rewritten to Codex's `... K bytes omitted ...`).
   */
  output: string;
  /** ceil(bytes / 4) of everything this call collected, dropped bytes included (Codex's count). */
  originalTokenCount: number;
  /** The model's `max_output_tokens`; above Codex's 10 000 it is capped, as Codex caps it by policy. */
  maxOutputTokens?: number | undefined;
  /** Bytes the retention buffer dropped from this call's output. */
  omittedBytes?: number | undefined;
  /** A middle of `output` the runtime left undecoded because the cut removes it (see core output-decoder.ts). */
  undecoded?: Undecoded | undefined;
  /** One-line facts the model must read ({@link codexNotes}); each becomes a `Warning:` line. */
  notes?: readonly string[] | undefined;
}

/** A new Codex chunk id: six hex digits, each uniformly random (Codex `generate_chunk_id`). */
export function codexChunkId(): string {
  return randomBytes(3).toString("hex");
}

/**
 * Seconds with exactly four decimals, as Rust's `{:.4}` prints Codex's wall time. Computed in whole
 * tenths of a millisecond, so no float formatting quirk can change a digit.
 */
export function codexWallTime(ms: number): string {
  const tenths = Number.isFinite(ms) && ms > 0 ? Math.round(ms * 10) : 0;
  return `${Math.floor(tenths / 10_000)}.${String(tenths % 10_000).padStart(4, "0")}`;
}

/** Codex's header lines, in Codex's order, ending with `Output:`. */
export function codexHeader(input: Pick<CodexResultInput, "chunkId" | "wallMs" | "exitCode" | "sessionId" | "originalTokenCount">): string {
  const lines: string[] = [];
  if (input.chunkId !== "") lines.push(`Chunk ID: ${input.chunkId}`);
  lines.push(`Wall time: ${codexWallTime(input.wallMs)} seconds`);
  if (input.exitCode !== undefined) lines.push(`Process exited with code ${input.exitCode ?? -1}`);
  if (input.sessionId !== undefined) lines.push(`Process running with session ID ${input.sessionId}`);
  lines.push(`Original token count: ${input.originalTokenCount}`, "Output:");
  return lines.join("\n");
}

/**
 * The token budget Codex applies: `max_output_tokens` (default 10 000), never above the model
 * policy of 10 000 tokens. A budget below 0 or not a number counts as the default.
 */
export function codexTokenBudget(maxOutputTokens: number | undefined): number {
  if (maxOutputTokens === undefined || !Number.isFinite(maxOutputTokens) || maxOutputTokens < 0) return CODEX_MAX_OUTPUT_TOKENS;
  return Math.min(Math.floor(maxOutputTokens), CODEX_MAX_OUTPUT_TOKENS);
}

/** {@link codexTokenBudget} in bytes, as Codex's truncation counts them. */
function codexByteBudget(maxOutputTokens: number | undefined): number {
  return bytesForTokens(codexTokenBudget(maxOutputTokens));
}

/** Our retention marker replaced by Codex's line `... K bytes omitted ...` (the first occurrence: the one the runtime put after the head). */
export function withCodexOmission(output: string, omittedBytes: number): string {
  if (omittedBytes <= 0) return output;
  const ours = omissionMarker(omittedBytes);
  const at = output.indexOf(ours);
  if (at === -1) return output;
  return `${output.slice(0, at)}\n${codexOmissionMarker(omittedBytes)}\n${output.slice(at + ours.length)}`;
}

/**
 * The whole model text: header, newline, output (cut to the budget in Codex's form). The
 * `Warning:` lines of {@link CodexResultInput.notes} come first in the output section, outside the
 * budget. Codex also shrinks the budget when header and output together would pass 1.2 × the
 * model's policy; with the policy fixed at 10 000 tokens that needs a header of some 8 000 bytes,
 * which ours never is, so that step is left out.
 */
export function codexResultText(input: CodexResultInput): string {
  const { header, notes, output } = codexResultParts(input);
  return `${header}\n${notes}${output}`;
}

/** The pieces of {@link codexResultText}: the header (through `Output:`), the `Warning:` note lines, and the output as cut. */
function codexResultParts(input: CodexResultInput): { header: string; notes: string; output: string } {
  const omitted = input.omittedBytes ?? 0;
  const output = withCodexOmission(input.output, omitted);
  const tokens = codexTokenBudget(input.maxOutputTokens);
  const undecoded = input.undecoded;
  const text =
    omitted > 0
      ? truncateWithOmission(output, omitted, tokens, input.originalTokenCount, undecoded?.bytes)
      : formattedTruncate(output, tokens, undecoded);
  const notes = (input.notes ?? []).map((note) => `Warning: ${metadataLine(note)}\n`).join("");
  return { header: codexHeader(input), notes, output: text };
}

/** Our fields Codex's text reads, by their names in a job result. */
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

/** What a call adds to its fields for the notes: it was cancelled, the shell's exit is news, a hint, matching lines the cut left out. */
export interface CodexCallFacts {
  cancelled?: boolean | undefined;
  shellExitNews?: boolean | undefined;
  hint?: string | undefined;
  unshown?: string | undefined;
}

const DISARMED = { exit_wake: "on_exit wake", wake_on_pattern: "wake_on_pattern" } as const;

const STOPPED_BY = {
  user: "the user stopped this process",
  deadline: "the process was stopped at its timeout_s deadline",
  boundary: "the process was stopped by a Pi session boundary (fork or reload)",
  quota: "the process was stopped because its log reached the quota",
  memory: "the process was stopped because its memory went over PI_UNIFIED_EXEC_MAX_JOB_RSS_MB",
} as const;

/**
 * The facts that must reach the model even in Codex's format, each as one line: what it asked for
 * did not fully happen (refused or failed input, a failure), someone else stopped the job, the call
 * was cancelled, the wake it armed cannot come, the shell exited leaving processes running, a person
 * typed into the job or disarmed its wakes, matching lines were cut from the output, a notice, the
 * registry is nearly full, a hint. The rest of our fields stay out of the text.
 */
export function codexNotes(fields: Partial<CodexFields>, call: CodexCallFacts = {}): string[] {
  const notes: string[] = [];
  const { killed_by: killedBy, failure_message: failure, completion_notification: completion } = fields;
  if (call.cancelled) notes.push("this call was cancelled; nothing was read and the process is as it was");
  // The quota stop already has its own failure message; say it once.
  if (killedBy && !(killedBy === "quota" && failure)) notes.push(STOPPED_BY[killedBy]);
  if (failure) notes.push(failure);
  // Plain `armed` only confirms the model's own request.
  if (completion && completion !== "armed") notes.push(`on_exit wake ${completion}`);
  if (call.shellExitNews && fields.shell_exit_code !== undefined)
    notes.push(`the shell exited with code ${fields.shell_exit_code ?? -1}${fields.background ? `; ${fields.background}` : ""}`);
  if (fields.user_input) notes.push(`the user typed ${fields.user_input} into this process (never shown to you)`);
  if (fields.user_disarmed?.length) {
    const wakes = fields.user_disarmed.map((wake) => DISARMED[wake]).join(" and ");
    notes.push(`the user disarmed this process's ${wakes} from the sessions picker; it will not wake you`);
  }
  if (call.unshown) notes.push(`lines matching wake_on_pattern were cut from this output and will not wake you: ${call.unshown}`);
  for (const line of [fields.notice, fields.warning, call.hint]) if (line) notes.push(line);
  return notes;
}

/** `write_stdin` on an id that names no running job, in Codex's words (it says "process id" for `session_id`). */
export function codexUnknownJobError(sessionId: number): string {
  return `write_stdin failed: Unknown process id ${sessionId}`;
}

// ---- What the text shows, and a job result in it ----

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

type Source = { text: string; printed: Printed; omittedBytes: number; elided?: Elision | undefined };

/** `pattern_matched_unshown` for Codex's text: matching lines outside the head and tail it shows. */
function codexUnshown(report: JobReport, source: Source, maxOutputTokens: number | undefined): string | undefined {
  if (report.screen || !report.output.matched) return undefined;
  const text = withCodexOmission(source.text, source.omittedBytes);
  const shown = codexShownLines(text, source.omittedBytes, codexByteBudget(maxOutputTokens), source.elided?.bytes ?? 0);
  return shown ? unshownMatches(report.output.matched, source.printed.lines, shown.tail, shown.head) : undefined;
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
    notes: codexNotes(fields, {
      cancelled: report.cancelled,
      // The shell's exit and what it left running, when news (as in our header); an exit line says it all.
      shellExitNews: report.backgroundChanged === true && (fields.background !== undefined || !exit),
      hint: extras.hint,
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
          shownLines: lineCount(parts.output),
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
