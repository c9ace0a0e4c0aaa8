import type { CallLedger } from "./call-ledger.ts";
import type { RuntimeSlot } from "./runtime-slot.ts";

/** What every tool of this extension works with: the session's runtime and the call ledger. */
export interface ToolWiring {
  slot: RuntimeSlot;
  ledger: CallLedger;
}

/** Pi modes that end the process when the run ends: a later wake has no session to arrive in. */
export function wakesOutliveRun(mode: string): boolean {
  return mode !== "print" && mode !== "json";
}
