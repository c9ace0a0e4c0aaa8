import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { CallLedger } from "./call-ledger.ts";
import type { RuntimeSlot } from "./runtime-slot.ts";
import { wakeSender } from "./wake-message.ts";

/**
 * Session lifecycle and the events exactly-once completion needs:
 * - `session_start` binds wake delivery to this Pi API (sending inside the factory would throw) and
 *   retries what could not be sent before;
 * - `tool_execution_start` / `_end` tell the ledger which call runs inside which, and when Pi has
 *   finalized a call, the moment its observations of job exits are committed;
 * - `tool_result` appends the receipt of exits seen by nested calls to the enclosing call's result;
 * - `agent_settled` retries sends that threw (a stale API);
 * - `session_shutdown` drops pending wakes and stops every job's process group (SIGTERM, grace,
 *   SIGKILL) so neither a test nor a user is left with orphaned children. Pi awaits it.
 */
export function registerLifecycle(pi: ExtensionAPI, slot: RuntimeSlot, ledger: CallLedger): void {
  pi.on("session_start", () => {
    slot.bindSender(wakeSender(pi));
  });

  pi.on("tool_execution_start", (event) => {
    ledger.started(event.toolCallId, event.parentToolCallId);
  });

  pi.on("tool_execution_end", (event) => {
    ledger.ended(event.toolCallId, event.isError);
  });

  pi.on("tool_result", (event) => {
    const receipt = ledger.takeReceipt(event.toolCallId);
    if (!receipt) return undefined;
    // Returned whole: Pi drops structuredContent and details from a handler result that omits them.
    return {
      content: [...event.content, { type: "text" as const, text: `\n${receipt}` }],
      details: event.details,
      ...(event.structuredContent !== undefined ? { structuredContent: event.structuredContent } : {}),
    };
  });

  pi.on("agent_settled", () => {
    slot.existing()?.completion.retry();
  });

  pi.on("session_shutdown", async () => {
    ledger.clear();
    const report = await slot.shutdown();
    if (!report) return;
    const problems = [...report.errors];
    if (report.survivors.length > 0) problems.push(`process groups still alive after SIGKILL: ${report.survivors.join(", ")}`);
    // Thrown so Pi reports it: a child that outlives the session must never go unnoticed.
    if (problems.length > 0) throw new Error(`pi-unified-exec could not stop every job: ${problems.join("; ")}`);
  });
}
