/*
 * results/ — what each tool returns. At a glance:
 * 1. this file maps a core job snapshot to the model's fields: the core's *job* becomes the model's
 *    `session_id`, metadata one inert line, a stop the model did not ask for its `killed_by`;
 * 2. each tool's builder adds what its call did (job-result, kill-result, list-result, set-on-exit-result);
 * 3. job-result's text carries the fields that are news (lean-header) and the output capped with the
 *    footer of what was printed (output-cap), or Codex's own text (codex);
 * 4. the same object gives the text, `structuredContent` (every field) and `details` (for the UI).
 */
import { Type } from "typebox";
import type { Background, DisarmedWake, JobExit, JobSnapshot, StopReason, UnreadTally, UserInput } from "../../core/index.ts";
import { metadata, oneLine } from "./format.ts";

/** Who stopped a job, when it was not the model's own `kill_session`. */
export type KilledBy = "user" | "deadline" | "boundary" | "quota" | "memory";

const KILLED_BY: Partial<Record<StopReason, KilledBy>> = {
  user: "user",
  timeout: "deadline",
  boundary: "boundary",
  log_quota: "quota",
  memory: "memory",
};

/** `killed_by`'s schema: who stopped the job when it was not the model's `kill_session`. */
export const killedBySchema = (description: string) =>
  Type.Optional(
    Type.Union(
      (["user", "deadline", "boundary", "quota", "memory"] as const).map((by) => Type.Literal(by)),
      { description },
    ),
  );

/** A server gone deaf, in a few words: `was :3000, closed 14 s ago`. */
export function deafText(deaf: { was: readonly string[]; closedMs: number }): string {
  const ports = [...new Set(deaf.was.map((address) => address.slice(address.lastIndexOf(":"))))];
  return `was ${ports.join(", ")}, closed ${Math.round(deaf.closedMs / 1000)} s ago`;
}

/** The job's memory and CPU figures (Linux): resident MB and CPU seconds summed over its processes. */
export function usageFields({ usage }: JobSnapshot): { memory_mb?: number; cpu_seconds?: number } {
  return usage ? { memory_mb: Math.round(usage.rssBytes / 1024 / 1024), cpu_seconds: Math.round(usage.cpuMs / 100) / 10 } : {};
}

/** The schema of {@link usageFields} and of `listening_lost`. */
export const usageSchema = {
  memory_mb: Type.Optional(Type.Integer({ description: "Resident memory of the job's processes together, MB (Linux)." })),
  cpu_seconds: Type.Optional(Type.Number({ description: "CPU time of the job's processes together (Linux)." })),
  listening_lost: Type.Optional(
    Type.String({ description: "The job listened and listens on nothing now while it runs: was :PORT, closed N s ago." }),
  ),
};

/** Header fields in the text's words: a deaf server's `listening` says what it lost. */
export function listeningInText(fields: Record<string, unknown>): Record<string, unknown> {
  if (fields.listening_lost === undefined) return fields;
  const { listening_lost, ...rest } = fields;
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, key === "listening" ? `none (${listening_lost})` : value]));
}

/** `killed_by` of an exit: set for a stop the model did not ask for. */
export function killedBy(exit: JobExit | undefined): KilledBy | undefined {
  return exit?.stoppedBy ? KILLED_BY[exit.stoppedBy] : undefined;
}

/** Why the runtime ended the job, when it did, in words the model can act on. */
export function stopMessage(exit: JobExit | undefined): string | undefined {
  if (exit?.stoppedBy === "log_quota") return "stopped because its log reached the quota (PI_UNIFIED_EXEC_ON_LOG_QUOTA=stop)";
  return undefined;
}

/**
 * A wake's note in a print or JSON run: the process ends with the run, so say so rather than promise
 * a wake that cannot come.
 */
const printRunNote = (what: string) =>
  `armed, but in this print/JSON run ${what} can only arrive while the run is still going; poll with write_stdin instead`;

/**
 * `completion_notification` for a job whose exit wake is armed at `level`, in Pi's `mode`; `arming`:
 * the result of the call that armed it says once what `next_turn` means.
 */
export function completionNote(level: "wake" | "next_turn" | undefined, mode: string, arming = false): string | undefined {
  if (!level) return undefined;
  if (mode === "print" || mode === "json") return printRunNote("it");
  if (level === "wake") return "armed";
  return arming ? "next_turn (told in your next turn, whoever starts it; it never starts one)" : "next_turn";
}

/** What a pattern that was too slow on the job's output tells the model, once: `wake_on_pattern`, `until_pattern`. */
export const PATTERN_SUSPENDED = "suspended (too slow on this output)";

/** The result fields about patterns: `wake_on_pattern` (armed, or suspended) and `until_pattern` (suspended). */
export const patternSchema = {
  wake_on_pattern: Type.Optional(
    Type.String({
      description:
        "armed: a later output line matching wake_on_pattern sends one follow-up prompt (first result after arming); suspended: too slow on this output, disarmed.",
    }),
  ),
  until_pattern: Type.Optional(Type.String({ description: "suspended: until_pattern was too slow on this output and stopped matching." })),
};

/** `wake_on_pattern` (armed by this call, or suspended) and `until_pattern` (suspended) for a result. */
export function suspendedFields(
  suspended: readonly string[] | undefined,
  armed: string | undefined,
): { wake_on_pattern?: string; until_pattern?: string } {
  const wake = armed ?? (suspended?.includes("wake_on_pattern") ? PATTERN_SUSPENDED : undefined);
  return {
    ...(wake ? { wake_on_pattern: wake } : {}),
    ...(suspended?.includes("until_pattern") ? { until_pattern: PATTERN_SUSPENDED } : {}),
  };
}

/**
 * `wake_on_pattern` in the first result after arming it (`written` as the job's snapshot has it):
 * `armed`, at `next_turn` what that means, or, in a print/JSON run, that a wake can only come while
 * the run lasts.
 */
export function patternNote(written: string | undefined, mode: string): string | undefined {
  if (written === undefined) return undefined;
  if (mode === "print" || mode === "json") return printRunNote("a wake");
  return written.startsWith("next_turn:") ? "armed at next_turn (told in your next turn, whoever starts it; it never starts one)" : "armed";
}

/** Characters of a command `details` keep (the model's text and the TUI bound it further). */
export const DETAILS_COMMAND_CHARS = 1_000;

/**
 * What an exited job printed that nobody read, without a byte of it: `3 lines, 0.1 KB (log lines
 * 4–6); first failure-looking line: log line 5 (2 in all)`. Where the log is partial its line
 * numbers no longer match the stream's, so they are given as the stream's.
 */
export function unreadWords({ lines, bytes, fromLine, toLine, failures, firstFailureLine }: UnreadTally, logPartial = false): string {
  if (lines === 0) return "nothing";
  const where = logPartial ? "stream line" : "log line";
  const span = fromLine === toLine ? `${where} ${fromLine}` : `${where}s ${fromLine}–${toLine}`;
  const first = firstFailureLine === undefined ? "" : `; first failure-looking line: ${where} ${firstFailureLine} (${failures} in all)`;
  return `${lines} line${lines === 1 ? "" : "s"}, ${(bytes / 1024).toFixed(1)} KB (${span})${first}`;
}

/** The exit, in the model's words: code, signal, whether a deadline or someone else stopped it. */
export function exitFields(exit: JobExit | undefined) {
  const stoppedBy = killedBy(exit);
  return {
    ...(exit ? { exit_code: exit.exitCode } : {}),
    ...(exit?.signal ? { signal: exit.signal } : {}),
    ...(exit?.stoppedBy === "timeout" ? { timed_out: true } : {}),
    ...(stoppedBy ? { killed_by: stoppedBy } : {}),
  };
}

/**
 * A snapshot's fields in the model's vocabulary: `session_id` while the job runs, its exit once it
 * ended, and the metadata (escaped to one line). Every result builds on these.
 */
export function jobFields(job: JobSnapshot) {
  return {
    ...(job.exit ? {} : { session_id: job.jobId }),
    ...(job.shellExit ? { shell_exit_code: job.shellExit.code } : {}),
    ...(job.background ? { background: backgroundLine(job.background) } : {}),
    ...exitFields(job.exit),
    log_path: metadata(job.logPath),
    cwd: metadata(job.cwd),
    output_bytes_total: job.outputBytesTotal,
    quiet_ms: job.quietMs,
    tty: job.tty,
    ...(job.terminal ? { cols: job.terminal.cols, rows: job.terminal.rows } : {}),
    ...(job.logPartialReason ? { log_partial: true as const } : {}),
    ...(job.listening ? { listening: job.listening.map((address) => metadata(address)) } : {}),
    ...(job.deaf ? { listening_lost: metadata(deafText(job.deaf)) } : {}),
    ...usageFields(job),
    ...(job.userTyping ? { user_typing: true as const } : {}),
  };
}

/**
 * `background`: what the exited shell left running, the first few named (their command lines as one
 * inert line each), the rest counted: `1 process still runs: python3 -m http.server (pid 4242); kill_session stops it`.
 */
export function backgroundLine({ pids, named }: Background): string {
  const count = pids.length;
  const names = named.map(({ pid, command }) => (command ? `${metadata(command)} (pid ${pid})` : `pid ${pid}`));
  const more = count > named.length ? ` and ${count - named.length} more` : "";
  const runs = count === 1 ? "1 process still runs" : `${count} processes still run`;
  return `${runs}: ${names.join(", ")}${more}; kill_session stops ${count === 1 ? "it" : "them"}`;
}

/** `user_input`: how many bytes the user typed into the job — never which. */
export function userInputText(input: { bytes: number; cancelled: boolean }): string {
  return input.cancelled ? "0 bytes (cancelled)" : `${input.bytes} byte${input.bytes === 1 ? "" : "s"}`;
}

/**
 * What a person did to the job that the model has not been told (`user_input` from the picker or
 * `ask_user`, `user_disarmed` from the picker): in the model's next result on the job of any tool, once.
 */
export const userNewsSchema = {
  user_input: Type.Optional(
    Type.String({
      description:
        "How many bytes the user typed into the job (ask_user, or from the sessions picker since your last call on it), Enter included; never the bytes themselves. 0 bytes (cancelled): they typed nothing.",
    }),
  ),
  user_disarmed: Type.Optional(
    Type.Array(Type.Union([Type.Literal("exit_wake"), Type.Literal("wake_on_pattern")]), {
      description: "Wakes of the job the user disarmed from the sessions picker since your last call on it: they will not wake you.",
    }),
  ),
};

/** The fields of {@link userNewsSchema} for a result, from what the core took for it. */
export function userNewsFields(news: { userInput?: UserInput | undefined; userDisarmed?: DisarmedWake[] | undefined }) {
  return {
    ...(news.userInput ? { user_input: userInputText(news.userInput) } : {}),
    ...(news.userDisarmed?.length ? { user_disarmed: [...news.userDisarmed] } : {}),
  };
}

/** What `details` keep beside the fields: the command and the log's reason, bounded, for the UI. */
export function jobDetailExtras(job: JobSnapshot) {
  return {
    command: oneLine(job.command, DETAILS_COMMAND_CHARS),
    ...(job.logPartialReason ? { log_partial_reason: metadata(job.logPartialReason) } : {}),
    ...(job.wakePattern !== undefined ? { wake_pattern: metadata(job.wakePattern) } : {}),
  };
}

/** `fields` with its keys in `order` (the reading order of the model's text), absent ones left out. */
export function inOrder<T extends object>(fields: T, order: readonly string[]): Partial<T> {
  const record = fields as Record<string, unknown>;
  return Object.fromEntries(order.filter((key) => record[key] !== undefined).map((key) => [key, record[key]])) as Partial<T>;
}

/** `input_wait` as the model reads it: `secret` when the terminal hides what is typed, else `likely`. */
export function inputWaitWord(wait: { secret?: true }): "likely" | "secret" {
  return wait.secret ? "secret" : "likely";
}
