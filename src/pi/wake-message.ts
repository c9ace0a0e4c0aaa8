import type { ExtensionAPI, MessageRenderer, Theme } from "@earendil-works/pi-coding-agent";
import { Box, Text } from "@earendil-works/pi-tui";
import {
  type DeafWakeJob,
  INPUT_WAKE_LINE_CHARS,
  type InputWakeJob,
  PATTERN_WAKE_BUDGET,
  PATTERN_WAKE_LINE_CHARS,
  type PatternWakeJob,
  visibleText,
  type WakeBatch,
  type WakeJob,
  type WakeSender,
} from "../core/index.ts";
import { matchWindow } from "./match-window.ts";
import { bounded, metadata, oneLine } from "./results/format.ts";
import { deafText, unreadWords } from "./results/job-fields.ts";

/**
 * Completion wakes as Pi messages: the prompt the model reads, the `details` kept in the session, and
 * the compact row the TUI draws. Every piece of job metadata in them is one escaped line.
 */

/** The custom message type of completion wakes (for renderers and tests). */
export const WAKE_MESSAGE_TYPE = "unified-exec-wake";

/** A job's metadata as the model and the session keep it: each field one escaped, bounded line. */
function inert(job: WakeJob): WakeJob {
  return {
    ...job,
    command: oneLine(job.command, 200),
    cwd: bounded(metadata(job.cwd), 200),
    logPath: metadata(job.logPath),
    signal: job.signal === null ? null : metadata(job.signal),
    ...(job.reason !== undefined ? { reason: bounded(metadata(job.reason), 200) } : {}),
  };
}

function describeJob(job: WakeJob): string {
  const parts = [
    `session ${job.jobId}`,
    `exit_code ${job.exitCode ?? "null"}${job.signal ? ` (${job.signal})` : ""}`,
    `ran ${(job.elapsedMs / 1000).toFixed(1)}s`,
    ...(job.reason ? [job.reason] : []),
    `cwd ${job.cwd}`,
    `log ${job.logPath}`,
    `\`${bounded(job.command, 120)}\``,
  ];
  const unread = job.unread ? `\n  unread: ${unreadWords(job.unread, job.logPartial)}` : "";
  return `- ${parts.join(" · ")}${unread}`;
}

/** A pattern wake's metadata as the model and the session keep it: one escaped, bounded line each, the line a window around the match. */
function inertPattern(wake: PatternWakeJob): PatternWakeJob {
  return {
    ...wake,
    pattern: oneLine(wake.pattern, 200),
    line: wake.lineWithheld ? "" : matchWindow(wake.line, wake.pattern, PATTERN_WAKE_LINE_CHARS),
    command: oneLine(wake.command, 200),
  };
}

/** What a wake says instead of the line of a job a person typed into (it may echo what they typed). */
const WITHHELD = "not quoted: a person typed into this job; write_stdin reads it";

/** One pattern wake; `exited` when the same prompt reports the job's exit (re-arming it is pointless then). */
function describePattern(wake: PatternWakeJob, exited: boolean): string {
  const more = wake.more > 0 ? `, and ${wake.more} more after it` : "";
  const disarmed = `  wake_on_pattern disarmed after ${PATTERN_WAKE_BUDGET} wakes${exited ? "" : ": set_on_exit to arm it again"}`;
  return [
    `- session ${wake.jobId} printed a line matching /${wake.pattern}/${more} · \`${bounded(wake.command, 120)}\``,
    `  line: ${wake.lineWithheld ? WITHHELD : wake.line}`,
    ...(wake.disarmed ? [disarmed] : []),
  ].join("\n");
}

/** An input wake's metadata as the model and the session keep it: one escaped, bounded line each. */
function inertInput(wake: InputWakeJob): InputWakeJob {
  return {
    ...wake,
    command: oneLine(wake.command, 200),
    ...(wake.line !== undefined ? { line: oneLine(wake.line, INPUT_WAKE_LINE_CHARS) } : {}),
  };
}

/** One input wake: the job, how long it has waited, and its last visible line (unless withheld). */
function describeInput(wake: InputWakeJob): string {
  const line = wake.withheld ? "withheld (a person typed into this job)" : (wake.line ?? "");
  const what = wake.secret ? "asks for a secret: ask the person with `ask_user`" : "waits for input";
  return [
    `- session ${wake.jobId} ${what} (${Math.round(wake.waitedMs / 1000)} s without output) · \`${bounded(wake.command, 120)}\``,
    `  last line: ${line}`,
  ].join("\n");
}

/** A deaf server's metadata, inert; one line: the job, what it listened on, how long ago it closed. */
function inertDeaf(wake: DeafWakeJob): DeafWakeJob {
  return { ...wake, command: oneLine(wake.command, 200), was: wake.was.map((address) => metadata(address)) };
}

function describeDeaf(wake: DeafWakeJob): string {
  return `- session ${wake.jobId} stopped listening while its processes run: listening: none (${deafText(wake)}) · \`${bounded(wake.command, 120)}\``;
}

/** What to do about a server gone deaf. */
const ANSWER_DEAF =
  "Its output since your last read says why (write_stdin reads it); once fixed it may listen again, or stop it with kill_session.";

/** The first line of a wake prompt: who has news, and of which kind (a job that matched and exited counts once). */
function opening(batch: WakeBatch): string {
  const exits = batch.jobs.length;
  const patterns = batch.patterns?.length ?? 0;
  const inputs = (batch.inputs?.length ?? 0) + (batch.deaf?.length ?? 0);
  const all = [...batch.jobs, ...(batch.patterns ?? []), ...(batch.inputs ?? []), ...(batch.deaf ?? [])];
  const count = new Set(all.map((job) => job.jobId)).size + batch.more;
  const jobs = count === 1 ? "A background job" : `${count} background jobs`;
  const asked = batch.nextTurn ? "you asked to hear of" : "you asked to be woken for";
  if (batch.deaf && exits + patterns + (batch.inputs?.length ?? 0) === 0)
    return `${jobs} ${asked} ${count === 1 ? "has" : "have"} stopped listening:`;
  if (patterns === 0 && inputs === 0) return `${jobs} ${asked} ${count === 1 ? "has" : "have"} exited:`;
  if (exits === 0 && inputs === 0) return `${jobs} printed ${count === 1 ? "a line" : "lines"} ${asked}:`;
  if (exits === 0 && patterns === 0) return `${jobs} ${asked} ${count === 1 ? "waits" : "wait"} for input:`;
  return `${jobs} ${asked} ${count === 1 ? "has" : "have"} news:`;
}

/** What to do about a job that waits for input. */
const ANSWER_INPUT =
  'Answer a job that waits for input with write_stdin(session_id, chars: "…\\n"), let the user answer with write_stdin(session_id, ask_user: "…") ' +
  "if only they know the answer, or stop it with kill_session.";

/** The prompt text of a wake: bounded metadata of each job and, for a pattern, the one matched line; never other output. */
export function wakeText(batch: WakeBatch): string {
  const patterns = batch.patterns ?? [];
  const exited = new Set(batch.jobs.map((job) => job.jobId));
  return [
    `[unified-exec] ${opening(batch)}`,
    ...batch.jobs.map(inert).map(describeJob),
    ...patterns.map(inertPattern).map((wake) => describePattern(wake, exited.has(wake.jobId))),
    ...(batch.inputs ?? []).map(inertInput).map(describeInput),
    ...(batch.deaf ?? []).map(inertDeaf).map(describeDeaf),
    ...(batch.more > 0 ? [`- and ${batch.more} more (list_sessions shows them)`] : []),
    ...(batch.held ? [`${batch.held} of these waited to save turns (the person's PI_UNIFIED_EXEC_WAKE_TURNS).`] : []),
    ...(batch.inputs ? [ANSWER_INPUT] : []),
    ...(batch.deaf ? [ANSWER_DEAF] : []),
    patterns.length === 0
      ? "write_stdin(session_id) returns any output not read yet (the full output is in the log). Continue only with work " +
        "that is still relevant to the user's request."
      : `${readAfterMatch(patterns)} returns the output not read yet, the matched line with what surrounds it, as soon as the job ` +
        "has printed nothing for half a second (the full output is in the log). Continue only with work that is still relevant to the user's request.",
  ].join("\n");
}

/** The read to make after a pattern wake: a quiet wait ends at once on output already waiting, where a plain poll sits its floor. */
function readAfterMatch(patterns: PatternWakeJob[]): string {
  return `write_stdin(session_id${patterns.length === 1 ? `: ${patterns[0]!.jobId}` : ""}, until_quiet_ms: 500)`;
}

/** A batch as Pi's custom message: the prompt text, and the `details` the session keeps and the row draws. */
export function wakeMessage(batch: WakeBatch) {
  return {
    customType: WAKE_MESSAGE_TYPE,
    content: wakeText(batch),
    display: true,
    details: {
      jobs: batch.jobs.map(inert),
      more: batch.more,
      ...(batch.patterns ? { patterns: batch.patterns.map(inertPattern) } : {}),
      ...(batch.inputs ? { inputs: batch.inputs.map(inertInput) } : {}),
      ...(batch.deaf ? { deaf: batch.deaf.map(inertDeaf) } : {}),
      ...(batch.held ? { held: batch.held } : {}),
      ...(batch.nextTurn ? { next_turn: true } : {}),
    },
  };
}

/**
 * Delivery through Pi: a custom message that starts a turn when Pi is idle and queues behind active
 * work as a follow-up otherwise, so it never interrupts a turn. `sendMessage` throws synchronously
 * only for a stale or unbound API, which the ledger retries; later failures are Pi's to report.
 * A `next_turn` batch is not sent: `before_agent_start` adds it to the run that starts.
 */
export function wakeSender(pi: ExtensionAPI): WakeSender {
  return (batch) => pi.sendMessage(wakeMessage(batch), { triggerTurn: true, deliverAs: "followUp" });
}

// ---- drawing ---------------------------------------------------------------------------------------

/** Any value from a message's details, as one inert line (a session file may hold anything). */
function line(value: unknown, limit = 120): string {
  return bounded(metadata(typeof value === "string" ? value : String(value ?? "")), limit);
}

/** How a job ended, in a few words: `exited 0`, `exited 1`, `killed by SIGTERM`. */
function ending(job: Partial<WakeJob>): string {
  if (job.signal) return `killed by ${line(job.signal)}`;
  return typeof job.exitCode === "number" ? `exited ${job.exitCode}` : "exited";
}

/** One job of a wake: `⏰ session 2 exited 0 after 20.1s · command`; expanded adds cwd and log. */
function jobRow(job: Partial<WakeJob>, theme: Theme, expanded: boolean): string {
  const failed = (job.exitCode !== 0 && job.exitCode !== undefined) || Boolean(job.signal) || Boolean(job.reason);
  const after = typeof job.elapsedMs === "number" ? ` after ${(job.elapsedMs / 1000).toFixed(1)}s` : "";
  const status = `⏰ session ${line(job.jobId)} ${ending(job)}${after}`;
  const rest = [...(job.reason ? [line(job.reason, 80)] : []), line(job.command, expanded ? 200 : 60)];
  const row = `${theme.fg(failed ? "error" : "success", status)}${theme.fg("muted", ` · ${rest.join(" · ")}`)}`;
  return expanded ? `${row}\n${theme.fg("muted", `  cwd ${line(job.cwd, 200)} · log ${line(job.logPath, 200)}`)}` : row;
}

/** One pattern wake: `🔔 session 3 matched /ERROR/ · the line`; expanded adds the command. */
function patternRow(wake: Partial<PatternWakeJob>, theme: Theme, expanded: boolean): string {
  const more = typeof wake.more === "number" && wake.more > 0 ? ` (+${line(wake.more)} more)` : "";
  const status = `🔔 session ${line(wake.jobId)} matched /${line(wake.pattern, 60)}/${more}`;
  const shown =
    wake.lineWithheld === true
      ? "line not quoted (typed into)"
      : matchWindow(String(wake.line ?? ""), String(wake.pattern ?? ""), expanded ? PATTERN_WAKE_LINE_CHARS : 80);
  const rest = [shown, ...(wake.disarmed ? ["pattern disarmed"] : [])];
  const row = `${theme.fg("warning", status)}${theme.fg("muted", ` · ${rest.join(" · ")}`)}`;
  return expanded ? `${row}\n${theme.fg("muted", `  ${line(wake.command, 200)}`)}` : row;
}

/** One input wake: `⌨ session 3 waits for input · the prompt line`; expanded adds the command. */
function inputRow(wake: Partial<InputWakeJob>, theme: Theme, expanded: boolean): string {
  const status = `⌨ session ${line(wake.jobId)} ${wake.secret ? "asks for a secret" : "waits for input"}`;
  const shown = wake.withheld ? "line withheld" : line(wake.line, expanded ? INPUT_WAKE_LINE_CHARS : 80);
  const row = `${theme.fg("warning", status)}${theme.fg("muted", ` · ${shown}`)}`;
  return expanded ? `${row}\n${theme.fg("muted", `  ${line(wake.command, 200)}`)}` : row;
}

/** One deaf server: `🔇 session 3 stopped listening · was :3000`. */
function deafRow(wake: Partial<DeafWakeJob>, theme: Theme): string {
  const was = Array.isArray(wake.was) ? wake.was.map((address) => line(address, 60)).join(", ") : "";
  return `${theme.fg("warning", `🔇 session ${line(wake.jobId)} stopped listening`)}${theme.fg("muted", ` · was ${was} · ${line(wake.command, 60)}`)}`;
}

/**
 * The TUI row of a wake: one line per job (the expand key adds cwd and log), while the model reads
 * the full text. Drawn from `details`; an older message without them falls back to its text, inert.
 */
export const renderWakeMessage: MessageRenderer = (message, options, theme) => {
  const details = message.details as
    | {
        jobs?: Partial<WakeJob>[];
        more?: number;
        patterns?: Partial<PatternWakeJob>[];
        inputs?: Partial<InputWakeJob>[];
        deaf?: Partial<DeafWakeJob>[];
        held?: unknown;
        next_turn?: unknown;
      }
    | undefined;
  const box = new Box(options.outputPad, 0, (text) => theme.bg("customMessageBg", text));
  const jobs = Array.isArray(details?.jobs) ? details.jobs : undefined;
  if (!jobs) {
    const content =
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    box.addChild(new Text(visibleText(content), 0, 0));
    return box;
  }
  const rows = jobs.map((job) => jobRow(job, theme, options.expanded));
  if (Array.isArray(details?.patterns)) rows.push(...details.patterns.map((wake) => patternRow(wake, theme, options.expanded)));
  if (Array.isArray(details?.inputs)) rows.push(...details.inputs.map((wake) => inputRow(wake, theme, options.expanded)));
  if (Array.isArray(details?.deaf)) rows.push(...details.deaf.map((wake) => deafRow(wake, theme)));
  if (details?.more) rows.push(theme.fg("muted", `⏰ … and ${line(details.more)} more (list_sessions shows them)`));
  if (details?.next_turn === true) rows.push(theme.fg("muted", "  came with this turn (next_turn)"));
  if (typeof details?.held === "number" && details.held > 0) rows.push(theme.fg("muted", `  ${line(details.held)} held to save turns`));
  box.addChild(new Text(rows.join("\n"), 0, 0));
  return box;
};

export function registerWakeRenderer(pi: ExtensionAPI): void {
  pi.registerMessageRenderer(WAKE_MESSAGE_TYPE, renderWakeMessage);
}
