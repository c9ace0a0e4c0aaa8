/**
 * How the five tools look in Pi's TUI, in the style of Pi's own bash tool: a bold command banner, a
 * collapsed 5-line preview of the output (the expand key shows all of it), a live elapsed counter,
 * and a one-line footer (`yielded …` / `took … · exit_code=…`). Rendering is kept apart from
 * execution; it reads only the call's arguments and the result's text and details.
 *
 * Terminal safety: every string drawn passes through one sanitizer, `visibleText` (lines kept) or
 * its one-line form `metadataLine`: output, every argument whatever its type (the model may send a
 * string where a number belongs), every result field. Controls are shown as `\e`, `\xHH`, invisible
 * and bidi characters as `<U+202E>`, so an OSC 52 clipboard write, a title change, cursor movement
 * or reordered text never reaches the user's terminal, and the human reads what the model reads.
 */

import { keyHint, type Theme, truncateToVisualLines } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Spacer, Text } from "@earendil-works/pi-tui";
import {
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_WRITE_YIELD_MS,
  decodeEscapes,
  LONG_WAIT_UPDATE_MS,
  metadataLine,
  visibleText,
} from "../core/index.ts";
import { bounded } from "./results/format.ts";
import { notShownSummary } from "./results/truncation-footer.ts";

const PREVIEW_LINES = 5;
const ARGUMENT_CHARS = 80;

/** Per-row state Pi keeps between renders: when the call started, and the redraw timer. */
interface RowState {
  startedAt?: number;
  endedAt?: number;
  interval?: NodeJS.Timeout;
}

interface ResultLike {
  content: { type: string; text?: string }[];
  details?: unknown;
}

/** The part of Pi's render context these renderers use (Pi 1.4 does not export the type by name). */
interface Context {
  args: object;
  state: RowState;
  invalidate: () => void;
  lastComponent: Component | undefined;
  executionStarted: boolean;
  isError: boolean;
  durationMs: number | undefined;
}

type Args = Record<string, unknown>;

/** Multi-line text (output, a command, an error) made inert for the terminal. */
const safe = (text: string) => visibleText(text);

/** Any value, whatever its type, as one inert line of at most `limit` characters. */
function inline(value: unknown, limit = ARGUMENT_CHARS): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) return "?";
  else if (typeof value === "object" && value !== null) {
    try {
      text = JSON.stringify(value) ?? "?";
    } catch {
      text = "?";
    }
  } else text = String(value);
  return bounded(metadataLine(text), limit);
}

/** A time argument: seconds when it is a number, otherwise exactly what was sent, inert. */
function waitArgument(value: unknown, fallbackMs: number): string {
  if (value === undefined || value === null) return duration(fallbackMs);
  return typeof value === "number" && Number.isFinite(value) ? duration(value) : inline(value);
}

function textOf(result: ResultLike): string {
  return result.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${Math.floor((ms % 60_000) / 1000)}s`;
  return `${Math.floor(minutes / 60)}h${minutes % 60}m`;
}

function tildify(path: string): string {
  const home = process.env.HOME;
  return home && path.startsWith(home) ? `~${path.slice(home.length)}` : path;
}

/**
 * The row's clock: started when the call starts executing, redrawn every `everyMs` while the result
 * is partial (an absolute wait redraws seldom: no heartbeat for hours), stopped at the final result.
 */
function elapsed(context: Context, isPartial: boolean, everyMs = 1000): number | undefined {
  const state = context.state;
  if (context.executionStarted && state.startedAt === undefined) state.startedAt = Date.now();
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

/**
 * The output of a result, where `details.output_at` says it sits in the text (the header and the
 * cap's footer are around it): the renderer never parses the model's text. A result without it (a
 * streaming update, a session file written before it existed) is all output.
 */
function outputOf(result: ResultLike): string {
  const text = textOf(result);
  const at = (result.details as { output_at?: unknown } | undefined)?.output_at;
  const output = Array.isArray(at) && typeof at[0] === "number" && typeof at[1] === "number" ? text.slice(at[0], at[1]) : text;
  return output.replace(/\n+$/, "");
}

/** Collapsed output: the last visual lines, with a hint to expand; caches per width. */
class TailPreview implements Component {
  private cache: { width: number; lines: string[] } | undefined;
  constructor(
    private readonly text: string,
    private readonly theme: Theme,
  ) {}
  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const { visualLines, skippedCount } = truncateToVisualLines(this.text, PREVIEW_LINES, width, 0, "end");
    const hint = skippedCount
      ? [
          this.theme.fg("muted", `... (${skippedCount} earlier lines,`) +
            ` ${keyHint("app.tools.expand", "to expand")}${this.theme.fg("muted", ")")}`,
        ]
      : [];
    this.cache = { width, lines: [...hint, ...visualLines] };
    return this.cache.lines;
  }
  invalidate(): void {
    this.cache = undefined;
  }
}

function outputBlock(container: Container, output: string, expanded: boolean, theme: Theme): void {
  if (!output) return;
  const styled = safe(output)
    .split("\n")
    .map((line) => theme.fg("toolOutput", line))
    .join("\n");
  container.addChild(new Spacer(1));
  container.addChild(expanded ? new Text(styled, 0, 0) : new TailPreview(styled, theme));
}

function reuse<T extends Component>(context: Context, make: () => T, is: (component: Component) => component is T): T {
  const last = context.lastComponent;
  return last && is(last) ? last : make();
}
const isText = (component: Component): component is Text => component instanceof Text;
const isContainer = (component: Component): component is Container => component instanceof Container;

function banner(context: Context, text: string): Component {
  const component = reuse(context, () => new Text("", 0, 0), isText);
  component.setText(text);
  return component;
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
    const notes = [
      `yield ${waitArgument(args.yield_time_ms, DEFAULT_EXEC_YIELD_MS)}`,
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
    return banner(context, theme.fg("toolTitle", theme.bold(`$ ${command}`)) + theme.fg("muted", ` (${notes.join(" · ")})`));
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
  const took = elapsed(context, options.isPartial, quietRedrawMs);
  if (context.isError) {
    container.addChild(new Text(`\n${theme.fg("error", safe(textOf(result)))}`, 0, 0));
    return container;
  }
  outputBlock(container, outputOf(result), options.expanded, theme);
  const time = took === undefined ? "" : duration(took);
  const log = typeof details.log_path === "string" ? ` · log: ${inline(tildify(details.log_path), Infinity)}` : "";
  const session = inline(details.session_id);
  let footer: string;
  if (options.isPartial) footer = `elapsed ${time}${details.session_id !== undefined ? ` · session_id=${session}` : ""}${log}`;
  else if (details.status === "cancelled") footer = `cancelled after ${time} · session_id=${session}`;
  else if (details.status === "running") footer = `yielded ${time} · session_id=${session}${log}`;
  else {
    const exit = [`exit_code=${inline(details.exit_code ?? "null")}`, ...(details.signal ? [`signal=${inline(details.signal)}`] : [])].join(
      " · ",
    );
    footer = `took ${time} · ${exit}${log}`;
  }
  const flags = [
    ...(details.timed_out ? ["timed out"] : []),
    ...(details.killed_by === "user" || details.killed_by === "boundary" ? [`killed by ${details.killed_by}`] : []),
    ...(details.failure_message !== undefined ? [inline(details.failure_message, Infinity)] : []),
    ...(details.log_partial_reason ? ["log partial"] : []),
    ...(details.wait_status === "deadline" ? ["deadline reached"] : []),
    ...cutNote(details.truncation),
  ];
  container.addChild(new Text(`\n${theme.fg("muted", footer)}${flags.length ? theme.fg("warning", ` · ${flags.join(" · ")}`) : ""}`, 0, 0));
  container.invalidate();
  return container;
}

/** `14.2MB not shown, full output in the log` when the model was shown only part of what the job printed. */
function cutNote(cut: unknown): string[] {
  const { printed, shownBytes, shownLines } = (cut ?? {}) as {
    printed?: { bytes?: unknown; lines?: unknown };
    shownBytes?: unknown;
    shownLines?: unknown;
  };
  if (typeof printed?.bytes !== "number" || typeof shownBytes !== "number") return [];
  const lines = typeof printed.lines === "number" ? printed.lines : 0;
  return [notShownSummary({ bytes: printed.bytes, lines }, { bytes: shownBytes, lines: Number(shownLines) || 0, lastLinePartial: false })];
}

// ---- write_stdin -------------------------------------------------------------------------------

export const writeStdinRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const target = ` → session_id=${inline(args.session_id)}`;
    let wait: string;
    if (typeof args.yield_until === "string") {
      const remaining = Date.parse(args.yield_until) - Date.now();
      const until = inline(args.yield_until);
      wait = Number.isNaN(remaining) ? `until ${until}` : remaining > 0 ? `until ${until}, ${duration(remaining)} left` : "deadline passed";
    } else if (args.yield_until !== undefined && args.yield_until !== null) wait = `until ${inline(args.yield_until)}`;
    else wait = `yield ${waitArgument(args.yield_time_ms, DEFAULT_WRITE_YIELD_MS)}`;
    const resize =
      args.cols !== undefined || args.rows !== undefined ? ` resize ${inline(args.cols ?? "·")}×${inline(args.rows ?? "·")}` : "";
    let head: string;
    if (typeof args.chars_b64 === "string" && args.chars_b64) head = `» (base64, ${Buffer.byteLength(args.chars_b64, "base64")} bytes)`;
    else if (args.chars_b64 !== undefined && args.chars_b64 !== null && args.chars_b64 !== "")
      head = `» (base64: ${inline(args.chars_b64)})`;
    else if (typeof args.chars === "string" && args.chars) head = `» ${showInput(args.chars)}`;
    else if (args.chars !== undefined && args.chars !== null && args.chars !== "") head = `» ${inline(args.chars)}`;
    else head = resize ? "»" : "⟳ poll";
    return banner(context, theme.fg("toolTitle", theme.bold(`${head}${resize}`)) + theme.fg("muted", `${target} (${wait})`));
  },

  renderResult(result: ResultLike, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: Context): Component {
    // An absolute wait may last hours: its clock redraws every 30 s, not every second.
    const quiet = typeof (context.args as Args).yield_until === "string" ? LONG_WAIT_UPDATE_MS : undefined;
    return jobResultComponent(result, options, theme, context, quiet);
  },
};

// ---- kill_session, list_sessions, set_on_exit --------------------------------------------------

/** A short result drawn from its `details` (`lines`), with any output collapsed; errors as they are. */
function summaryResult(lines: (details: Record<string, unknown>) => string[]) {
  return (result: ResultLike, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: Context): Component => {
    const container = reuse(context, () => new Container(), isContainer);
    container.clear();
    if (context.isError) {
      container.addChild(new Text(`\n${theme.fg("error", safe(textOf(result)))}`, 0, 0));
      return container;
    }
    const details = (result.details ?? {}) as Record<string, unknown>;
    container.addChild(new Text(`\n${theme.fg("muted", lines(details).join("\n"))}`, 0, 0));
    if (details.output_at !== undefined) outputBlock(container, outputOf(result), options.expanded, theme);
    return container;
  };
}

/** `kill_session`: what was sent, the exit, the cleanup evidence. */
function killLines(details: Record<string, unknown>): string[] {
  const exit = details.exit_code !== undefined ? ` · exit_code=${inline(details.exit_code ?? "null")}` : "";
  const signal = details.signal ? ` · signal=${inline(details.signal)}` : "";
  const extra = [
    ...(details.escalated === true ? ["escalated to SIGKILL"] : []),
    ...(Array.isArray(details.survivors) && details.survivors.length ? [`survivors ${inline(details.survivors.join(", "))}`] : []),
    ...(details.failure_message !== undefined ? [inline(details.failure_message, Infinity)] : []),
  ];
  const head = `${inline(details.status)} · session_id=${inline(details.session_id)}${exit}${signal} · cleanup ${inline(details.cleanup)}`;
  return [head + (extra.length ? ` · ${extra.join(" · ")}` : "")];
}

/** `list_sessions`: one line per job. */
function listLines(details: Record<string, unknown>): string[] {
  const sessions = Array.isArray(details.sessions) ? (details.sessions as Record<string, unknown>[]) : [];
  const head = `${sessions.length} session${sessions.length === 1 ? "" : "s"}: ${inline(details.running ?? 0)} running`;
  return [
    head,
    ...sessions.map((job) => {
      const exit = job.status === "exited" ? ` exit_code=${inline(job.exit_code ?? "null")}` : "";
      return `  ${inline(job.session_id)} ${inline(job.status)}${exit} ${inline(job.command)}`;
    }),
  ];
}

/** `set_on_exit`: what became of the wake. */
function setOnExitLines(details: Record<string, unknown>): string[] {
  if (details.found === false) return [`session_id=${inline(details.session_id)} not found`];
  return [`session_id=${inline(details.session_id)} · on_exit ${inline(details.on_exit)} · ${inline(details.status)}`];
}

export const killSessionRenderer = {
  renderCall(callArgs: object, theme: Theme, context: Context): Component {
    const args = callArgs as Args;
    const signal = args.signal === undefined || args.signal === null ? "SIGTERM" : inline(args.signal);
    return banner(
      context,
      theme.fg("toolTitle", theme.bold(`✕ kill session_id=${inline(args.session_id)}`)) + theme.fg("muted", ` (${signal})`),
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
    return banner(
      context,
      theme.fg("toolTitle", theme.bold(`set_on_exit session_id=${inline(args.session_id)} → ${inline(args.on_exit)}`)),
    );
  },
  renderResult: summaryResult(setOnExitLines),
};
