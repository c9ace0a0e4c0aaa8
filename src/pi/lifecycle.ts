import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { RuntimeSlot } from "./runtime-slot.ts";

/**
 * Session lifecycle: when Pi shuts the session down, every job's process group is stopped (SIGTERM,
 * grace, SIGKILL) so neither a test nor a user is left with orphaned children. Pi awaits this handler.
 */
export function registerLifecycle(pi: ExtensionAPI, slot: RuntimeSlot): void {
  pi.on("session_shutdown", async () => {
    const report = await slot.shutdown();
    if (!report) return;
    const problems = [...report.errors];
    if (report.survivors.length > 0) problems.push(`process groups still alive after SIGKILL: ${report.survivors.join(", ")}`);
    // Thrown so Pi reports it: a child that outlives the session must never go unnoticed.
    if (problems.length > 0) throw new Error(`pi-unified-exec could not stop every job: ${problems.join("; ")}`);
  });
}
