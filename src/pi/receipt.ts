import type { CallKind, Receipt } from "../core/index.ts";

/** The tool each kind of call is, as the model knows it. */
const TOOL: Record<CallKind, string> = { exec: "exec_command", write: "write_stdin", kill: "kill_session", list: "list_sessions" };

/**
 * The receipt appended to an outermost call's result when calls nested inside it (Pi codemode
 * scripts, `ctx.executeTool`) reported job exits: a nested result may never reach the model, so the
 * model hears of them here, and learns they will not wake it again.
 */
export function receiptText(receipt: Receipt): string {
  const lines = receipt.exits.map(
    (exit) =>
      `- session ${exit.jobId}: exit_code ${exit.exitCode ?? "null"}${exit.signal ? ` (${exit.signal})` : ""}, seen by ${TOOL[exit.kind]}`,
  );
  const hidden = receipt.total - receipt.exits.length;
  return [
    `[unified-exec receipt: ${receipt.total} job exit${receipt.total === 1 ? "" : "s"} reported inside this call; they will not wake you again]`,
    ...lines,
    ...(hidden > 0 ? [`- and ${hidden} more (list_sessions shows the jobs still known)`] : []),
  ].join("\n");
}
