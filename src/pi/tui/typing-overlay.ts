/*
 * How a person types into a job, by where Pi runs: in Pi's TUI a PTY job gets the overlay (its live
 * screen, every key sent as a terminal would send it, `terminal-keys.ts`; only Ctrl+] is Pi's; it
 * closes by itself at the job's exit), a pipe job a one-line input; an RPC client gets the `input`
 * dialog for both. Print and JSON runs have nobody to ask. What the person types is never drawn by us.
 */
import type { ExtensionContext, ExtensionUIContext, Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import type { AskTheUser, Job, ScreenView, TypingSession } from "../../core/index.ts";
import { bounded, oneLine } from "../results/format.ts";
import { terminalBytes } from "./terminal-keys.ts";

/** Redraw check: output shows on the overlay within this (the issue asks ≤ 50 ms). */
const REDRAW_MS = 30;
/** How long the overlay shows the job's exit before it closes by itself. */
const EXIT_SHOWN_MS = 1_200;
/** Rows the overlay uses besides the screen: title, the model's words (ask_user), two rules. */
const CHROME_ROWS = 4;

/** Open overlays, to close at a session boundary or reload (Pi drops them without resolving them). */
const open = new Set<() => void>();

/** Closes every open overlay (session shutdown, reload). */
export function closeTypingOverlays(): void {
  for (const close of [...open]) close();
}

/** The screen's rows to show in `height` rows: the whole screen, or the part around the cursor. */
function visibleRows(view: ScreenView, height: number): { lines: string[]; first: number } {
  const lines = Array.from({ length: view.rows }, (_, row) => view.lines[row] ?? "");
  if (lines.length <= height) return { lines, first: 0 };
  const first = Math.min(Math.max(0, view.cursor.row - height), lines.length - height);
  return { lines: lines.slice(first, first + height), first };
}

/** `line` with the cell at `col` (1-based) in reverse video: the job's cursor. */
function withCursor(line: string, col: number): string {
  const chars = [...line];
  while (chars.length < col) chars.push(" ");
  const at = col - 1;
  return `${chars.slice(0, at).join("")}\x1b[7m${chars[at]}\x1b[27m${chars.slice(at + 1).join("")}`;
}

class TypingOverlay implements Component {
  private readonly timer: NodeJS.Timeout;
  private seenBytes = -1;
  private exitNote: string | undefined;

  constructor(
    private readonly tui: TUI,
    private readonly theme: Theme,
    private readonly job: Job,
    private readonly typing: TypingSession,
    private readonly question: string | undefined,
    private readonly close: () => void,
  ) {
    this.timer = setInterval(() => this.tick(), REDRAW_MS);
    this.timer.unref();
  }

  render(width: number): string[] {
    const theme = this.theme;
    const rule = theme.fg("muted", "─".repeat(Math.max(1, width)));
    const title = this.exitNote ?? `session ${this.job.id} · you are typing into the job · Ctrl+] returns to Pi`;
    const head = [truncateToWidth(theme.fg(this.exitNote ? "warning" : "toolTitle", theme.bold(title)), width)];
    if (this.question !== undefined) head.push(truncateToWidth(theme.fg("accent", this.question), width));
    const live = this.job.liveScreen();
    const height = Math.max(1, this.tui.terminal.rows - CHROME_ROWS);
    const body = live ? visibleRows(live.view, height) : { lines: ["(the job's screen is gone)"], first: 0 };
    const rows = body.lines.map((line, index) => {
      const cursorHere = live && !this.exitNote && body.first + index + 1 === live.view.cursor.row;
      // A blank row is drawn as a space: an empty string may be dropped where the overlay is laid over Pi's screen.
      return truncateToWidth(cursorHere ? withCursor(line, live.view.cursor.col) : line || " ", width);
    });
    return [...head, rule, ...rows, rule];
  }

  handleInput(data: string): void {
    if (matchesKey(data, "ctrl+]") || data === "\x1d") {
      this.close();
      return;
    }
    const live = this.job.liveScreen();
    if (this.exitNote || !live) return;
    const bytes = terminalBytes(data, live.keys);
    if (bytes !== undefined) void this.typing.type(Buffer.from(bytes, "utf8")).catch(() => {});
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
  }

  /** Redraws when the job printed something; shows the exit, then closes. */
  private tick(): void {
    const exit = this.job.exit;
    if (exit && !this.exitNote) {
      const how = exit.signal ? `killed by ${exit.signal}` : `exit ${exit.exitCode ?? "?"}`;
      this.exitNote = `session ${this.job.id} ended (${how}) · closing`;
      this.tui.requestRender();
      setTimeout(() => this.close(), EXIT_SHOWN_MS).unref();
      return;
    }
    const bytes = this.job.outputBytesTotal;
    if (bytes === this.seenBytes) return;
    this.seenBytes = bytes;
    this.tui.requestRender();
  }
}

/**
 * Opens the overlay on `job` and resolves when the person returns to Pi (Ctrl+]), the job has exited,
 * `signal` fired, or the session ends. `question`: the model's words (`ask_user`).
 */
function typeInOverlay(
  ui: ExtensionUIContext,
  job: Job,
  typing: TypingSession,
  question: string | undefined,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let closeOverlay: (() => void) | undefined;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      open.delete(finish);
      signal?.removeEventListener("abort", finish);
      try {
        closeOverlay?.();
      } catch {
        // Pi may have dropped the overlay already (a reload): it is gone either way.
      }
      resolve();
    };
    open.add(finish);
    signal?.addEventListener("abort", finish, { once: true });
    void ui
      .custom<void>(
        (tui, theme, _keys, done) => {
          closeOverlay = () => done();
          return new TypingOverlay(tui, theme, job, typing, question, finish);
        },
        { overlay: true, overlayOptions: { anchor: "top-left", width: "100%", maxHeight: "100%" } },
      )
      .then(finish, finish);
    if (signal?.aborted) finish();
  });
}

/** Whether this run can ask a person at all. */
function canAskPerson(ctx: Pick<ExtensionContext, "hasUI" | "mode">): boolean {
  return ctx.hasUI && ctx.mode !== "print" && ctx.mode !== "json";
}

/**
 * Lets the person type into `job` with `title` above (the model's words, or the picker's); resolves
 * once they are done or the job ends (the input and the dialog close on `typing.closed`). True when
 * they sent nothing on purpose (a cancelled dialog, Ctrl+] at once).
 */
export async function letPersonType(
  ctx: Pick<ExtensionContext, "ui" | "mode">,
  job: Job,
  typing: TypingSession,
  title: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const shown = oneLine(title, 300);
  if (ctx.mode === "tui" && job.tty) {
    await typeInOverlay(ctx.ui, job, typing, shown, signal);
    return typing.bytes === 0;
  }
  const until = signal ? AbortSignal.any([signal, typing.closed]) : typing.closed;
  const line = await ctx.ui.input(shown, undefined, { signal: until });
  if (line === undefined) {
    if (!typing.closed.aborted || signal?.aborted) return true;
    // Pi forgets the dialog, but RPC has no message that closes a client's dialog: say why it no longer counts.
    if (ctx.mode === "rpc")
      ctx.ui.notify(`Session ${job.id} ended; the dialog "${bounded(shown, 80)}" is closed and nothing was sent.`, "info");
    return false;
  }
  await typing.type(Buffer.from(`${line}${job.tty ? "\r" : "\n"}`, "utf8"));
  return false;
}

/** `ask_user` for a tool call in this run, or undefined where nobody can be asked. */
export function personAsker(ctx: ExtensionContext): AskTheUser | undefined {
  if (!canAskPerson(ctx)) return undefined;
  return (typing, job, question, signal) => letPersonType(ctx, job, typing, question, signal);
}
