import type { CallLedger } from "./call-ledger.ts";
import type { SessionRuntimes } from "./session-runtimes.ts";

/** What every tool of this extension works with: the session runtimes and the call ledger. */
export interface ToolWiring {
  runtimes: SessionRuntimes;
  ledger: CallLedger;
}

/** Pi modes that end the process when the run ends: a later wake has no session to arrive in. */
export function wakesOutliveRun(mode: string): boolean {
  return mode !== "print" && mode !== "json";
}
