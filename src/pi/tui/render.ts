/**
 * How `exec_command` and `write_stdin` look in Pi's TUI, in the style of Pi's own bash tool: a bold
 * banner with the command or the input, a collapsed 5-line preview of the output (the expand key
 * shows all of it), a live clock with the real window, and one footer line (`yielded …`, `took … ·
 * exit 0`, failures in the error color). Rendering is kept apart from execution: it reads only the
 * call's arguments and the result's `details`, never the model's text. The other three tools'
 * rows are in `summary-renderers.ts`; what all rows share, terminal safety included, in
 * `render-parts.ts`.
 */

import type { Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Text } from "@earendil-works/pi-tui";
import { DEFAULT_EXEC_YIELD_MS, decodeEscapes, LONG_WAIT_UPDATE_MS, visibleText } from "../../core/index.ts";
import { bounded } from "../results/format.ts";
import { notShownNote } from "../results/truncation-footer.ts";
import { isExitWakeDisarmed, onExitWakeDisarmed } from "./disarmed-wakes.ts";
import {
  ARGUMENT_CHARS,
  type Args,
  banner,
  type Context,
  duration,
  exitWords,
  inline,
  isContainer,
  modelTextBlock,
  outputBlock,
  outputOf,
  type ResultLike,
  reuse,
  safe,
  textOf,
  tildify,
} from "./render-parts.ts";

/** A time argument: seconds when it is a number, otherwise exactly what was sent, inert. */
function waitArgument(value: unknown, fallbackMs: number): string {
  if (value === undefined || value === null) return duration(fallbackMs);
  return typeof value === "number" && Number.isFinite(value) ? duration(value) : inline(value);
}

/** The conditions that may end a wait early, as the banner names them. */
function untilConditions(args: Args): string[] {
  return [
    ...(args.until_pattern !== undefined ? [`until /${inline(args.until_pattern, 40)}/`] : []),
    ...(args.until_quiet_ms !== undefined ? [`until quiet ${waitArgument(args.until_quiet_ms, 0)}`] : []),
  ];
}

/** An absolute wait's deadline, with the time left when it parses. */
function untilNote(value: unknown): string {
  const until = inline(value);
  const remaining = typeof value === "string" ? Date.parse(value) - Date.now() : Number.NaN;
  if (Number.isNaN(remaining)) return `until ${until}`;
  return remaining > 0 ? `until ${until}, ${duration(remaining)} left` : "deadline passed";
}

/** Starts the row's clock when the call starts executing (Pi re-renders the call row then). */
function startClock(context: Context): void {
  if (context.executionStarted && context.state.startedAt === undefined) context.state.startedAt = Date.now();
}

/**
 * The row's clock: from the call's start, redrawn every `everyMs` while the result is partial (an
 * absolute wait redraws seldom: no heartbeat for hours), stopped at the final result. A progress
 * update says how long the call has waited, so a row drawn late still counts from the right moment.
 */
function elapsed(context: Context, isPartial: boolean, waitedMs: number | undefined, everyMs = 1000): number | undefined {
  const state = context.state;
  startClock(context);
  if (isPartial && waitedMs !== undefined) state.startedAt = Math.min(state.startedAt ?? Date.now(), Date.now() - waitedMs);
  if (state.startedAt !== undefined && isPartial && !state.interval) {
    state.interval = setInterval(() => context.invalidate(), everyMs);
    state.interval.unref?.();
  }
  if (!isPartial || context.isError) {
    state.endedAt ??= Date.now();
    clearInterval(state.interval);
    state.interval = undefined;
  }
  if (!isPartial && context.durationMs !== undefined) return context.durationMs;
  return state.startedAt === undefined ? undefined : (state.endedAt ?? Date.now()) - state.startedAt;
}

/** `\x03` as `^C`, a newline as `\n`, U+202E as `<U+202E>`: what the model sent, readable and inert. */
export function showInput(chars: string): string {
  // Only the start is shown: a megabyte of input is not decoded again on every redraw.
  const decoded = decodeEscapes(chars.slice(0, 8 * ARGUMENT_CHARS)).toString("utf8");
  let shown = "";
  for (const char of decoded) {
    const code = char.codePointAt(0)!;
    if (char === "\n") shown += "\\n";
    else if (char === "\r") shown += "\\r";
    else if (char === "\t") shown += "\\t";
    else if (code < 0x20) shown += `^${String.fromCharCode(code + 64)}`;
    else if (code === 0x7f) shown += "^?";
    else if (code >= 0x80 && code < 0xa0) shown += `\\x${code.toString(16)}`;
    else shown += char;
  }
  return bounded(visibleText(shown), ARGUMENT_CHARS); // bidi and invisible characters as <U+XXXX>
}

// ---- exec_command ------------------------------------------------------------------------------

export const execCommandRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const command = typeof args.cmd === "string" ? safe(args.cmd) : args.cmd === undefined ? "…" : inline(args.cmd);
    startClock(context);
    const notes = [
      // The default window is not repeated: the result row shows the real one while it waits.
      ...(args.yield_time_ms !== undefined && args.yield_time_ms !== DEFAULT_EXEC_YIELD_MS
        ? [`yield ${waitArgument(args.yield_time_ms, 0)}`]
        : []),
      ...untilConditions(args),
      ...(args.workdir !== undefined ? [`cwd: ${inline(typeof args.workdir === "string" ? tildify(args.workdir) : args.workdir)}`] : []),
      ...(args.shell !== undefined ? [`shell: ${inline(args.shell)}`] : []),
      ...(args.tty === true ? ["tty"] : args.tty !== undefined && args.tty !== false ? [`tty: ${inline(args.tty)}`] : []),
      ...(args.cols !== undefined || args.rows !== undefined ? [`${inline(args.cols ?? "·")}×${inline(args.rows ?? "·")}`] : []),
      ...(args.timeout_s !== undefined ? [`timeout ${inline(args.timeout_s)}s`] : []),
      ...(args.on_exit === "wake"
        ? ["wake"]
        : args.on_exit !== undefined && args.on_exit !== "none"
          ? [`on_exit: ${inline(args.on_exit)}`]
          : []),
    ];
    const noted = notes.length ? theme.fg("muted", ` (${notes.join(" · ")})`) : "";
    return banner(context, theme.fg("toolTitle", theme.bold(`$ ${command}`)) + noted);
  },

  renderResult(result: ResultLike, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: Context): Component {
    return jobResultComponent(result, options, theme, context);
  },
};

/** The result of `exec_command` or `write_stdin`: output preview and the footer line. */
function jobResultComponent(
  result: ResultLike,
  options: { expanded: boolean; isPartial: boolean },
  theme: Theme,
  context: Context,
  quietRedrawMs?: number,
): Component {
  const container = reuse(context, () => new Container(), isContainer);
  container.clear();
  const details = (result.details ?? {}) as Record<string, unknown>;
  const waited = options.isPartial && typeof details.wall_time_seconds === "number" ? details.wall_time_seconds * 1000 : undefined;
  const took = elapsed(context, options.isPartial, waited, quietRedrawMs);
  if (context.isError) {
    container.addChild(new Text(`\n${theme.fg("error", safe(textOf(result)))}`, 0, 0));
    return container;
  }
  // Expanded, a finished call shows what the model read, word for word; collapsed, the output's end.
  if (options.expanded && !options.isPartial) modelTextBlock(container, textOf(result), theme);
  else outputBlock(container, outputOf(result), options.expanded, theme);
  watchDisarm(details, context);
  const { text, failed } = jobFooter(details, options, took === undefined ? "" : duration(took));
  const flags = jobFlags(details);
  const footer = theme.fg(failed ? "error" : "muted", text) + (flags.length ? theme.fg("warning", ` · ${flags.join(" · ")}`) : "");
  container.addChild(new Text(`\n${footer}`, 0, 0));
  container.invalidate();
  return container;
}

/** Whether the row says `wake armed` (at its level): the result armed it, and the person has not disarmed it from the picker since. */
function wakeNote(details: Record<string, unknown>): string {
  const note = details.completion_notification;
  if (typeof note !== "string" || !/^(armed|next_turn)/.test(note)) return "";
  if (isExitWakeDisarmed(details.session_id)) return " · wake disarmed";
  return note.startsWith("next_turn") ? " · wake armed (next_turn)" : " · wake armed";
}

/** A row that says `wake armed` redraws when the person disarms that wake (once: then it says so). */
function watchDisarm(details: Record<string, unknown>, context: Context): void {
  if (!wakeNote(details).startsWith(" · wake armed")) {
    context.state.unwatchDisarm?.();
    context.state.unwatchDisarm = undefined;
    return;
  }
  context.state.unwatchDisarm ??= onExitWakeDisarmed(() => {
    if (isExitWakeDisarmed(details.session_id)) context.invalidate();
  });
}

/** A job row's footer line, and whether it reports a failure (a non-zero exit, a timeout). */
function jobFooter(details: Record<string, unknown>, options: { expanded: boolean; isPartial: boolean }, time: string) {
  const session = `session ${inline(details.session_id)}`;
  const armed = wakeNote(details);
  const cut = details.truncation !== undefined;
  if (options.isPartial) {
    const left = typeof details.yield_until === "string" ? Date.parse(details.yield_until) - Date.now() : Number.NaN;
    // A person typing for `ask_user` has no time limit: the window starts once they are done.
    const window = !Number.isNaN(left)
      ? ` · ${duration(Math.max(0, left))} left`
      : typeof details.yield_time_ms === "number" && details.yield_time_ms > 0 && details.user_typing !== true
        ? ` · wait ≤ ${duration(details.yield_time_ms)}`
        : "";
    return { text: `elapsed ${time}${window}${details.session_id !== undefined ? ` · ${session}` : ""}`, failed: false };
  }
  // Esc ends the wait only: say so, rather than look like a stop.
  if (details.status === "cancelled") return { text: `still running in the background · ${session}${armed}`, failed: false };
  const log = typeof details.log_path === "string" ? ` · log: ${inline(tildify(details.log_path), Infinity)}` : "";
  // The output is a screen rather than the stream: say so, since its rows read differently.
  const view = typeof details.view === "string" ? ` · ${inline(details.view)}` : "";
  if (details.status === "running") {
    return {
      text: `yielded ${time} · ${session}${armed}${view}${options.expanded || cut ? log : ""}`,
      failed: false,
    };
  }
  const exit = exitWords(details.exit_code, details.signal);
  const failed = details.exit_code !== 0 || details.timed_out === true;
  // The log path is noise on a plain success: shown expanded, when output was cut, or when it failed.
  const showLog = options.expanded || cut || failed || details.failure_message !== undefined;
  return { text: `took ${time} · ${exit}${view}${showLog ? log : ""}`, failed };
}

/** What a job row flags beside its footer. */
function jobFlags(details: Record<string, unknown>): string[] {
  return [
    ...(details.timed_out ? ["timed out"] : []),
    ...(details.killed_by === "user" || details.killed_by === "boundary" ? [`killed by ${details.killed_by}`] : []),
    ...(details.failure_message !== undefined ? [inline(details.failure_message, Infinity)] : []),
    ...(details.log_partial_reason ? ["log partial"] : []),
    ...(details.wait_status === "deadline" ? ["deadline reached"] : []),
    // A count only: what the user typed is never in details, so it cannot be drawn.
    ...(typeof details.user_input === "string" ? [`» you typed ${inline(details.user_input)}`] : []),
    ...(details.user_typing === true ? ["the user is typing (no time limit)"] : []),
    ...(details.wait_status === "steered" ? ["your message ended the wait"] : []),
    ...(details.input_wait === "likely" ? ["waiting for input"] : []),
    ...notShownNote(details.truncation),
  ];
}

// ---- write_stdin -------------------------------------------------------------------------------

export const writeStdinRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const target = ` → session ${inline(args.session_id)}`;
    // Only a window the model chose is shown; the result row shows the real one while it waits.
    const notes = [
      ...(args.yield_until !== undefined && args.yield_until !== null ? [untilNote(args.yield_until)] : []),
      ...(args.yield_time_ms !== undefined && args.yield_time_ms !== null ? [`yield ${waitArgument(args.yield_time_ms, 0)}`] : []),
      ...untilConditions(args),
    ];
    const resize =
      args.cols !== undefined || args.rows !== undefined ? ` resize ${inline(args.cols ?? "·")}×${inline(args.rows ?? "·")}` : "";
    let head: string;
    if (args.ask_user !== undefined && args.ask_user !== null) head = `? ask the user: ${inline(args.ask_user, 120)}`;
    else if (typeof args.chars_b64 === "string" && args.chars_b64)
      head = `» (base64, ${Buffer.byteLength(args.chars_b64, "base64")} bytes)`;
    else if (args.chars_b64 !== undefined && args.chars_b64 !== null && args.chars_b64 !== "")
      head = `» (base64: ${inline(args.chars_b64)})`;
    else if (typeof args.chars === "string" && args.chars) head = `» ${showInput(args.chars)}`;
    else if (args.chars !== undefined && args.chars !== null && args.chars !== "") head = `» ${inline(args.chars)}`;
    else head = resize ? "»" : "⟳ poll";
    const noted = notes.length ? ` (${notes.join(" · ")})` : "";
    return banner(context, theme.fg("toolTitle", theme.bold(`${head}${resize}`)) + theme.fg("muted", `${target}${noted}`));
  },

  renderResult(result: ResultLike, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: Context): Component {
    // An absolute wait may last hours: its clock redraws every 30 s, not every second.
    const quiet = typeof (context.args as Args).yield_until === "string" ? LONG_WAIT_UPDATE_MS : undefined;
    return jobResultComponent(result, options, theme, context, quiet);
  },
};
