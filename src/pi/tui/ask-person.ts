import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AskTheUser, Job, TypingSession } from "../../core/index.ts";
import { bounded, oneLine } from "../results/format.ts";
import { typeInOverlay } from "./typing-overlay.ts";

/**
 * How a person types into a job, by where Pi runs: in Pi's TUI a PTY job gets the overlay with its
 * live screen, a pipe job a one-line input; an RPC client gets the `input` dialog for both (its line
 * plus Enter: `\r` on a PTY, `\n` on a pipe). Print and JSON runs have nobody to ask.
 */

/** Whether this run can ask a person at all. */
export function canAskPerson(ctx: Pick<ExtensionContext, "hasUI" | "mode">): boolean {
  return ctx.hasUI && ctx.mode !== "print" && ctx.mode !== "json";
}

/**
 * Lets the person type into `job` through `typing`, with `title` above (the model's words, or the
 * picker's); resolves once they are done, or once the job ends (the overlay sees the exit itself; the
 * one-line input and the RPC dialog close on `typing.closed`). True when they sent nothing on purpose
 * (a cancelled dialog, Ctrl+] at once); false when the job's end closed the dialog.
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
