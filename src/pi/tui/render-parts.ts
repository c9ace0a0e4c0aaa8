/**
 * What every row renderer of the five tools shares: the shape of Pi's render context and of a result,
 * the one sanitizer for a line (`inline`) or a block (`safe`), the output preview, and components
 * reused between renders. Terminal safety lives here: every string a row draws passes `inline` or
 * `safe`, so controls show as `\e`, `\xHH` and invisible or bidi characters as `<U+202E>`.
 */

import { keyHint, type Theme, truncateToVisualLines } from "@earendil-works/pi-coding-agent";
import { type Component, Container, Spacer, Text } from "@earendil-works/pi-tui";
import { metadataLine, visibleText } from "../../core/index.ts";
import { bounded, shortDuration } from "../results/format.ts";

const PREVIEW_LINES = 5;
export const ARGUMENT_CHARS = 80;

/** Per-row state Pi keeps between renders: when the call started, and the redraw timer. */
export interface RowState {
  startedAt?: number;
  endedAt?: number;
  interval?: NodeJS.Timeout;
  /** Stops listening for a person's disarm of the exit wake this row says is armed. */
  unwatchDisarm?: () => void;
}

export interface ResultLike {
  content: { type: string; text?: string }[];
  details?: unknown;
}

/** The part of Pi's render context these renderers use (Pi 1.4 does not export the type by name). */
export interface Context {
  args: object;
  state: RowState;
  invalidate: () => void;
  lastComponent: Component | undefined;
  executionStarted: boolean;
  isError: boolean;
  durationMs: number | undefined;
}

export type Args = Record<string, unknown>;

/** Multi-line text (output, a command, an error) made inert for the terminal. */
export const safe = (text: string) => visibleText(text);

/** Any value, whatever its type, as one inert line of at most `limit` characters. */
export function inline(value: unknown, limit = ARGUMENT_CHARS): string {
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

export function textOf(result: ResultLike): string {
  return result.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

export const duration = shortDuration;

export function tildify(path: string): string {
  const home = process.env.HOME;
  return home && path.startsWith(home) ? `~${path.slice(home.length)}` : path;
}

/**
 * The output of a result, where `details.output_at` says it sits in the text (the header and the
 * cap's footer are around it): the renderer never parses the model's text. A result without it (a
 * streaming update, a session file written before it existed) is all output.
 */
export function outputOf(result: ResultLike): string {
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

export function outputBlock(container: Container, output: string, expanded: boolean, theme: Theme): void {
  if (!output) return;
  const styled = safe(output)
    .split("\n")
    .map((line) => theme.fg("toolOutput", line))
    .join("\n");
  container.addChild(new Spacer(1));
  container.addChild(expanded ? new Text(styled, 0, 0) : new TailPreview(styled, theme));
}

/**
 * An expanded job row (Ctrl+O): the whole text the model read for this result — its header, the
 * output and any footer — exactly, made inert, under a label that says so.
 */
export function modelTextBlock(container: Container, text: string, theme: Theme): void {
  container.addChild(new Spacer(1));
  container.addChild(new Text(theme.fg("muted", "the text the model read:"), 0, 0));
  const styled = safe(text.replace(/\n+$/, ""))
    .split("\n")
    .map((line) => theme.fg("toolOutput", line))
    .join("\n");
  container.addChild(new Text(styled, 0, 0));
}

export function reuse<T extends Component>(context: Context, make: () => T, is: (component: Component) => component is T): T {
  const last = context.lastComponent;
  return last && is(last) ? last : make();
}
export const isText = (component: Component): component is Text => component instanceof Text;
export const isContainer = (component: Component): component is Container => component instanceof Container;

export function banner(context: Context, text: string): Component {
  const component = reuse(context, () => new Text("", 0, 0), isText);
  component.setText(text);
  return component;
}

/**
 * An exit in a few words: `exit 0`, `exit 2`, `killed by SIGTERM` (a signal death has no exit code;
 * the row does not invent the shell's 128+n).
 */
export function exitWords(code: unknown, signal: unknown): string {
  if (signal && (code === null || code === undefined)) return `killed by ${inline(signal)}`;
  return `exit ${inline(code ?? "null")}${signal ? ` (${inline(signal)})` : ""}`;
}
