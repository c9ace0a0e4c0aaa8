/**
 * How `kill_session`, `list_sessions` and `set_on_exit` look in Pi's TUI: compact rows in Pi's
 * style, one line per job or outcome, the rest when expanded, failures in the error color. Drawn
 * from the result's `details` only.
 */

import type { Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Text } from "@earendil-works/pi-tui";
import { patternWords } from "./jobs-ui.ts";
import {
  type Args,
  banner,
  type Context,
  duration,
  exitWords,
  inline,
  isContainer,
  outputBlock,
  outputOf,
  type ResultLike,
  reuse,
  safe,
  textOf,
} from "./render-parts.ts";

/** One styled line of a summary row, and whether it reports a failure. */
interface SummaryLine {
  text: string;
  failed?: boolean;
}

/**
 * A compact result drawn from its `details`: `lines(details, expanded)`; any output the result
 * carries shows only expanded. Errors as they are.
 */
function summaryResult(lines: (details: Record<string, unknown>, expanded: boolean) => SummaryLine[]) {
  return (result: ResultLike, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: Context): Component => {
    const container = reuse(context, () => new Container(), isContainer);
    container.clear();
    const details = (result.details ?? {}) as Record<string, unknown>;
    // A refusal (thrown, so its details are empty) shows its sentence; a failed kill its own row.
    if (context.isError && details.session_id === undefined) {
      container.addChild(new Text(`\n${theme.fg("error", safe(textOf(result)))}`, 0, 0));
      return container;
    }
    const drawn = lines(details, options.expanded).map((line) => theme.fg(line.failed || context.isError ? "error" : "muted", line.text));
    container.addChild(new Text(`\n${drawn.join("\n")}`, 0, 0));
    if (options.expanded && details.output_at !== undefined) outputBlock(container, outputOf(result), true, theme);
    return container;
  };
}

const KILL_HEADS: Record<string, string> = {
  killed: "■ stopped",
  already_exited: "■ already exited:",
  kill_failed: "✗ could not stop",
  still_running: "✗ still running after SIGKILL:",
};

/** `kill_session`, one line: `■ stopped session 1 · exit 143 (SIGTERM) · cleanup confirmed`. */
function killLines(details: Record<string, unknown>, expanded: boolean): SummaryLine[] {
  const status = typeof details.status === "string" ? details.status : "";
  const head = `${KILL_HEADS[status] ?? inline(status)} session ${inline(details.session_id)}`;
  const parts = [
    head,
    ...(details.exit_code !== undefined ? [exitWords(details.exit_code, details.signal)] : []),
    ...(details.escalated === true ? ["escalated to SIGKILL"] : []),
    `cleanup ${inline(details.cleanup)}`,
    ...(Array.isArray(details.survivors) && details.survivors.length ? [`survivors ${inline(details.survivors.join(", "))}`] : []),
    ...(details.failure_message !== undefined ? [inline(details.failure_message, Infinity)] : []),
  ];
  const more = expanded
    ? [{ text: `  $ ${inline(details.command, 200)} · cwd ${inline(details.cwd, 200)} · log ${inline(details.log_path, Infinity)}` }]
    : [];
  const failed = status === "kill_failed" || status === "still_running" || details.cleanup === "unconfirmed";
  return [{ text: parts.join(" · "), failed }, ...more];
}

/** A job's age or run time, for the listing: `2m10s`. */
function age(seconds: unknown): string {
  return typeof seconds === "number" && Number.isFinite(seconds) ? duration(seconds * 1000) : "?";
}

/** `list_sessions`: one line per job (`1 running 2m10s python3 -m http.server 8765 [wake]`); expanded adds the rest. */
function listLines(details: Record<string, unknown>, expanded: boolean): SummaryLine[] {
  const sessions = Array.isArray(details.sessions) ? (details.sessions as Record<string, unknown>[]) : [];
  if (!sessions.length) return [{ text: "no sessions" }];
  return sessions.flatMap((job) => {
    const exited = job.status === "exited";
    const state = exited ? exitWords(job.exit_code, job.signal) : "running";
    const flags = [
      ...(job.wake_armed === true ? [job.wake_level === "next_turn" ? "next_turn" : "wake"] : []),
      ...(typeof job.wake_on_pattern === "string" ? [inline(patternWords(job.wake_on_pattern, 40), 60)] : []),
      ...(job.input_wait === "likely" ? ["waiting for input"] : []),
      ...(job.attached === true ? ["attached"] : []),
      ...(job.user_typing === true ? ["the user is typing"] : []),
      ...(job.killed_by !== undefined ? [`killed by ${inline(job.killed_by)}`] : []),
      ...(job.cleanup === "unconfirmed" ? ["cleanup unconfirmed"] : []),
    ];
    const tags = flags.length ? ` [${flags.join(", ")}]` : "";
    const failed = exited && (job.exit_code !== 0 || job.timed_out === true);
    const ports = Array.isArray(job.listening)
      ? job.listening.map((address) => ` ${inline(String(address).slice(String(address).lastIndexOf(":")))}`).join("")
      : "";
    const row = {
      text: `${inline(job.session_id)} ${state} ${age(job.elapsed_seconds)} ${inline(job.command, 60)}${ports}${tags}`,
      failed,
    };
    if (!expanded) return [row];
    const rest = [
      `cwd ${inline(job.cwd, 200)}`,
      ...(Array.isArray(job.listening) ? [`listening ${job.listening.map((address) => inline(address)).join(", ")}`] : []),
      ...(job.tty === true ? ["tty"] : []),
      `quiet ${age(typeof job.quiet_ms === "number" ? job.quiet_ms / 1000 : undefined)}`,
      `${inline(job.output_bytes_total ?? 0)} bytes`,
      ...(job.deadline_remaining_seconds !== undefined ? [`deadline in ${age(job.deadline_remaining_seconds)}`] : []),
      `log ${inline(job.log_path, Infinity)}`,
      ...(job.failure_message !== undefined ? [inline(job.failure_message, Infinity)] : []),
    ];
    return [row, { text: `    ${rest.join(" · ")}` }];
  });
}

/** `set_on_exit`: what became of the wake and of the pattern. */
function setOnExitLines(details: Record<string, unknown>): SummaryLine[] {
  if (details.found === false) return [{ text: `session ${inline(details.session_id)} not found`, failed: true }];
  const parts = [`session ${inline(details.session_id)}`];
  if (details.status !== undefined) parts.push(`on_exit ${inline(details.on_exit)} · ${inline(details.status)}`);
  if (details.wake_on_pattern_status !== undefined) {
    const pattern = details.wake_on_pattern ? `/${inline(details.wake_on_pattern, 60)}/` : '""';
    parts.push(`wake_on_pattern ${pattern} · ${inline(details.wake_on_pattern_status)}`);
  }
  return [{ text: parts.join(" · ") }];
}

export const killSessionRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const signal = args.signal === undefined || args.signal === null ? "SIGTERM" : inline(args.signal);
    return banner(
      context,
      theme.fg("toolTitle", theme.bold(`✕ kill session ${inline(args.session_id)}`)) + theme.fg("muted", ` (${signal})`),
    );
  },
  renderResult: summaryResult(killLines),
};

export const listSessionsRenderer = {
  renderCall(_args: object, theme: Theme, context: Context): Component {
    return banner(context, theme.fg("toolTitle", theme.bold("≡ list_sessions")));
  },
  renderResult: summaryResult(listLines),
};

export const setOnExitRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const changes = [
      ...(args.on_exit !== undefined ? [`on_exit ${inline(args.on_exit)}`] : []),
      ...(args.wake_on_pattern !== undefined
        ? [args.wake_on_pattern === "" ? "wake_on_pattern off" : `wake /${inline(args.wake_on_pattern, 60)}/`]
        : []),
    ];
    return banner(context, theme.fg("toolTitle", theme.bold(`set_on_exit session ${inline(args.session_id)} → ${changes.join(", ")}`)));
  },
  renderResult: summaryResult(setOnExitLines),
};
