import { RECEIPT_MAX_KEPT, RECEIPT_MAX_SHOWN } from "../core/constants.ts";
import type { ExecRuntime } from "../core/runtime.ts";

/** A job exit a nested call reported, kept for the enclosing call's receipt. */
export interface ObservedExit {
  tool: string;
  sessionId: number;
  exitCode: number | null;
  signal: string | null;
}

/**
 * Which tool call runs inside which, and what nested calls saw. Pi codemode scripts (and any tool
 * using `ctx.executeTool`) call these tools from inside another tool call; Pi reports such calls with
 * a `parentToolCallId`, and a nested result may never reach the model. So a nested call's observation
 * of an exit moves to the outermost call: it is committed when that call is finalized, and that call's
 * result gets a receipt naming the exits, so the model sees them even when the script prints nothing.
 */
export class CallLedger {
  private readonly parents = new Map<string, string>();
  private readonly observations = new Map<string, ObservedExit[]>();
  /** Exits seen by nested calls, per outermost call, for its receipt. */
  private readonly receipts = new Map<string, { kept: ObservedExit[]; total: number; sessions: Set<number> }>();

  constructor(private readonly runtime: () => ExecRuntime | undefined) {}

  /** `tool_execution_start`: remember who runs inside whom. */
  started(callId: string, parentCallId: string | undefined): void {
    if (parentCallId) this.parents.set(callId, parentCallId);
  }

  /** The outermost call `callId` runs in (itself when it is not nested). */
  rootOf(callId: string): string {
    let current = callId;
    for (let parent = this.parents.get(current); parent; parent = this.parents.get(current)) current = parent;
    return current;
  }

  isNested(callId: string): boolean {
    return this.parents.has(callId);
  }

  /** A tool's result carried a job's exit. */
  observed(callId: string, exit: ObservedExit): void {
    const list = this.observations.get(callId) ?? [];
    list.push(exit);
    this.observations.set(callId, list);
  }

  /**
   * `tool_execution_end`. A nested call hands what it observed to the outermost call (or releases it,
   * if it failed); an outermost call commits, or releases when it ended as an error.
   */
  ended(callId: string, isError: boolean): void {
    const runtime = this.runtime();
    const seen = this.observations.get(callId) ?? [];
    this.observations.delete(callId);
    if (this.parents.has(callId)) {
      const root = this.rootOf(callId);
      this.parents.delete(callId);
      if (isError) {
        runtime?.completion.release(callId);
        return;
      }
      runtime?.completion.transfer(callId, root);
      // A job's exit is named once, however often nested reads replayed it.
      const receipt = this.receipts.get(root) ?? { kept: [], total: 0, sessions: new Set<number>() };
      const fresh = seen.filter((exit) => !receipt.sessions.has(exit.sessionId));
      if (fresh.length) {
        for (const exit of fresh) receipt.sessions.add(exit.sessionId);
        receipt.kept.push(...fresh);
        receipt.total += fresh.length;
        receipt.kept.splice(0, Math.max(0, receipt.kept.length - RECEIPT_MAX_KEPT));
        this.receipts.set(root, receipt);
      }
      return;
    }
    runtime?.completion.finalize(callId, isError);
    runtime?.endScope(callId);
    this.receipts.delete(callId);
  }

  /** The receipt to append to an outermost call's result, if nested calls inside it saw exits. */
  takeReceipt(callId: string): string | undefined {
    const receipt = this.receipts.get(callId);
    if (!receipt || this.parents.has(callId)) return undefined;
    const shown = receipt.kept.slice(-RECEIPT_MAX_SHOWN);
    const lines = shown.map(
      (exit) =>
        `- session ${exit.sessionId}: exit_code ${exit.exitCode ?? "null"}${exit.signal ? ` (${exit.signal})` : ""}, seen by ${exit.tool}`,
    );
    const hidden = receipt.total - shown.length;
    return [
      `[unified-exec receipt: ${receipt.total} job exit${receipt.total === 1 ? "" : "s"} reported inside this call; they will not wake you again]`,
      ...lines,
      ...(hidden > 0 ? [`- and ${hidden} more (list_sessions shows the jobs still known)`] : []),
    ].join("\n");
  }

  /** Forgets everything (session end). */
  clear(): void {
    this.parents.clear();
    this.observations.clear();
    this.receipts.clear();
  }
}
