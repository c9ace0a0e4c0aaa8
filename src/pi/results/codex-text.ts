import { randomBytes } from "node:crypto";
import { CODEX_MAX_OUTPUT_TOKENS, isInvisible, metadataLine, omissionMarker } from "../../core/index.ts";
import {
  bytesForTokens,
  codexOmissionMarker,
  formattedTruncate,
  middleCut,
  truncateWithOmission,
  type Undecoded,
} from "./codex-truncate.ts";

/**
 * The model text of `exec_command` / `write_stdin` results in Codex's own format
 * (`PI_UNIFIED_EXEC_FORMAT=codex`), and Codex's error wordings. Built from plain values, so the
 * result layer decides what goes in and this module only decides how it reads. Everything that is
 * not in Codex's text stays in `structuredContent` / `details`; the few facts the model must not
 * miss travel as `Warning:` lines at the top of the output (see {@link codexNotes}).
 */

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
export function codexByteBudget(maxOutputTokens: number | undefined): number {
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
export function codexResultParts(input: CodexResultInput): { header: string; notes: string; output: string } {
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

/** Facts of a result that Codex's text has no line for. */
export interface CodexNoteFacts {
  /** Our `failure_message` (stdin refused or failed, could not start, log quota stop, …). */
  failureMessage?: string | undefined;
  /** Our `killed_by`: a stop the model did not ask for. */
  killedBy?: "user" | "deadline" | "boundary" | "quota" | undefined;
  /** The call was cancelled: nothing was read, the job is as it was. */
  cancelled?: boolean | undefined;
  /** Our `warning` (job slots nearly full). */
  warning?: string | undefined;
  /** Our `notice` (for example which shell stood in for bash). */
  notice?: string | undefined;
  /** Our `completion_notification`; plain `armed` only confirms the model's own request and is left out. */
  completion?: string | undefined;
  /** A line of guidance just in time (`guidance/hints.ts`). */
  hint?: string | undefined;
  /** Our `shell_exit_code` and `background`, when they are news (the shell exited leaving processes, or they changed). */
  shellExit?: { code: number | null; background?: string | undefined } | undefined;
  /** Our `user_input`: how many bytes a person typed into the job (`12 bytes`, `0 bytes (cancelled)`). */
  userInput?: string | undefined;
  /** Our `user_disarmed`: wakes a person disarmed from the sessions picker. */
  userDisarmed?: readonly ("exit_wake" | "wake_on_pattern")[] | undefined;
  /** Our `pattern_matched_unshown`: matching lines this text cut (they never wake later). */
  unshown?: string | undefined;
}

const DISARMED = { exit_wake: "on_exit wake", wake_on_pattern: "wake_on_pattern" } as const;

/** What a person and the shell did that the model has not been told: one line each. */
function newsNotes(facts: CodexNoteFacts): string[] {
  const notes: string[] = [];
  const shell = facts.shellExit;
  if (shell) notes.push(`the shell exited with code ${shell.code ?? -1}${shell.background ? `; ${shell.background}` : ""}`);
  if (facts.userInput) notes.push(`the user typed ${facts.userInput} into this process (never shown to you)`);
  if (facts.userDisarmed?.length) {
    const wakes = facts.userDisarmed.map((wake) => DISARMED[wake]).join(" and ");
    notes.push(`the user disarmed this process's ${wakes} from the sessions picker; it will not wake you`);
  }
  if (facts.unshown) notes.push(`lines matching wake_on_pattern were cut from this output and will not wake you: ${facts.unshown}`);
  return notes;
}

const STOPPED_BY = {
  user: "the user stopped this process",
  deadline: "the process was stopped at its timeout_s deadline",
  boundary: "the process was stopped by a Pi session boundary (fork or reload)",
  quota: "the process was stopped because its log reached the quota",
} as const;

/**
 * The facts that must reach the model even in Codex's format, each as one line: what it asked
 * for did not fully happen (refused or failed input, a failure), someone else stopped the job, the
 * call was cancelled, the shell exited leaving processes running, a person typed into the job or
 * disarmed its wakes, matching lines were cut from the output, or the registry is nearly full. The
 * rest of our fields stay out of the text.
 */
export function codexNotes(facts: CodexNoteFacts): string[] {
  const notes: string[] = [];
  if (facts.cancelled) notes.push("this call was cancelled; nothing was read and the process is as it was");
  // The quota stop already has its own failure message; say it once.
  if (facts.killedBy && !(facts.killedBy === "quota" && facts.failureMessage)) notes.push(STOPPED_BY[facts.killedBy]);
  if (facts.failureMessage) notes.push(facts.failureMessage);
  if (facts.completion && facts.completion !== "armed") notes.push(`on_exit wake ${facts.completion}`);
  notes.push(...newsNotes(facts));
  if (facts.notice) notes.push(facts.notice);
  if (facts.warning) notes.push(facts.warning);
  if (facts.hint) notes.push(facts.hint);
  return notes;
}

// ---- Errors, in Codex's words where Codex has them ----

/** Codex's Display text of `UnknownProcessId` (it says "process id" for the model's `session_id`). */
export function codexUnknownProcess(sessionId: number): string {
  return `Unknown process id ${sessionId}`;
}

/** Codex's Display texts of the other unified-exec errors a port can meet. */
export const CODEX_ERROR_TEXT = {
  writeToStdin: "failed to write to stdin",
  stdinClosed: "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open",
  missingCommandLine: "missing command line for unified exec request",
  createProcess: (message: string) => `Failed to create unified exec process: ${message}`,
  processFailed: (message: string) => `Unified exec process failed: ${message}`,
} as const;

/** A `write_stdin` error as Codex words it: `write_stdin failed: <Display text>`. */
export function codexWriteStdinError(display: string): string {
  return `write_stdin failed: ${display}`;
}

/** The `write_stdin` error for an id that names no running job: `write_stdin failed: Unknown process id N`. */
export function codexUnknownJobError(sessionId: number): string {
  return codexWriteStdinError(codexUnknownProcess(sessionId));
}

/** Longest `exec_command` error Codex returns; longer ones lose their middle (`…N chars truncated…`). */
const EXEC_ERROR_MAX_BYTES = 900;

/** A string as Rust's `{:?}` prints it: quoted, with `\\`, `\"`, `\n`, `\r`, `\t`, `\0` and `\u{…}` for other controls and invisible characters. */
export function rustDebugString(text: string): string {
  let out = '"';
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    if (char === "\\" || char === '"') out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (cp === 0) out += "\\0";
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || isInvisible(cp)) out += `\\u{${cp.toString(16)}}`;
    else out += char;
  }
  return `${out}"`;
}

/**
 * An `exec_command` error as Codex words it: `exec_command failed: ` and the error's Rust Debug
 * form, e.g. `CreateProcess { message: "…" }`, bounded to 900 bytes.
 */
export function codexExecCommandError(kind: "CreateProcess" | "ProcessFailed", message: string): string {
  return middleCut(`exec_command failed: ${kind} { message: ${rustDebugString(message)} }`, EXEC_ERROR_MAX_BYTES, "chars");
}
