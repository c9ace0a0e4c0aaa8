/*
 * pi/tui/ — what a person sees and does. This file: the five tools' rows in Pi's style (`exec_command`
 * and `write_stdin` as a banner, a 5-line preview, a live clock and a footer; the others as compact
 * lines), drawn from the arguments and `details` only, every string through `inline` or `safe`
 * (controls as `\e`, `\xHH`, bidi as `<U+202E>`). `jobs-ui.ts`: the footer and widget;
 * `sessions-command.ts`: `/unified-exec-sessions`; `typing-overlay.ts`, `terminal-keys.ts`: typing into a job.
 */
import { keyHint, type Theme, truncateToVisualLines } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Spacer, Text } from "@earendil-works/pi-tui";
import { DEFAULT_EXEC_YIELD_MS, decodeEscapes, metadataLine, visibleText } from "../../core/index.ts";
import { bounded, shortDuration as duration } from "../results/format.ts";
import { notShownNote } from "../results/output-cap.ts";
import { patternWords } from "./jobs-ui.ts";

const PREVIEW_LINES = 5;
/** A quiet absolute (`yield_until`) wait's row and progress refresh at most this often: no heartbeat for hours. */
export const LONG_WAIT_UPDATE_MS = 30_000;
const ARGUMENT_CHARS = 80;

/** Per-row state Pi keeps between renders: when the call started, and the redraw timer. */
interface RowState {
  startedAt?: number;
  endedAt?: number;
  interval?: NodeJS.Timeout;
  /** Stops listening for a person's disarm of the exit wake this row says is armed. */
  unwatchDisarm?: () => void;
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

function textOf(result: ResultLike): string {
  return result.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

function tildify(path: string): string {
  const home = process.env.HOME;
  return home && path.startsWith(home) ? `~${path.slice(home.length)}` : path;
}

/** The output, where `details.output_at` says it sits in the text; without it (a streaming update, an old session) all of it. */
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

const styled = (text: string, theme: Theme) =>
  safe(text)
    .split("\n")
    .map((line) => theme.fg("toolOutput", line))
    .join("\n");

function outputBlock(container: Container, output: string, expanded: boolean, theme: Theme): void {
  if (!output) return;
  container.addChild(new Spacer(1));
  container.addChild(expanded ? new Text(styled(output, theme), 0, 0) : new TailPreview(styled(output, theme), theme));
}

/** An expanded job row (Ctrl+O): the whole text the model read, exactly, made inert, under a label that says so. */
function modelTextBlock(container: Container, text: string, theme: Theme): void {
  container.addChild(new Spacer(1));
  container.addChild(new Text(theme.fg("muted", "the text the model read:"), 0, 0));
  container.addChild(new Text(styled(text.replace(/\n+$/, ""), theme), 0, 0));
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

/** `exit 0`, `killed by SIGTERM`: a signal death has no exit code, and the row does not invent the shell's 128+n. */
function exitWords(code: unknown, signal: unknown): string {
  if (signal && (code === null || code === undefined)) return `killed by ${inline(signal)}`;
  return `exit ${inline(code ?? "null")}${signal ? ` (${inline(signal)})` : ""}`;
}

/**
 * Exit wakes a person disarmed from the picker: a row drawn before, which said `wake armed`, redraws as
 * `wake disarmed` (its `details` cannot change). Ids are never reused within a Pi process.
 */
const disarmed = new Set<number>();
const listeners = new Set<() => void>();

/** The person disarmed the exit wake of `jobId`: every row that said it was armed redraws. */
export function exitWakeDisarmedByPerson(jobId: number): void {
  disarmed.add(jobId);
  for (const listener of [...listeners]) listener();
}

function isExitWakeDisarmed(sessionId: unknown): boolean {
  return typeof sessionId === "number" && disarmed.has(sessionId);
}

function onExitWakeDisarmed(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

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

/** The row's clock, redrawn every `everyMs` while partial; a progress update's wait keeps a late row counting from the right moment. */
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
    ...(details.input_wait === "likely" ? ["waiting for input"] : details.input_wait === "secret" ? ["asks for a secret"] : []),
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

// ---- kill_session, list_sessions, set_on_exit ----------------------------------------------------

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
      ...(job.input_wait === "likely" ? ["waiting for input"] : job.input_wait === "secret" ? ["asks for a secret"] : []),
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
