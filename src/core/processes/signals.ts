import { metadataLine } from "../output/visible-text.ts";
import { ExecRequestError } from "../shared/errors.ts";

/** Signals `kill_session` accepts: the ones that ask a process to end. */
export const KILL_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL"] as const;
export type KillSignal = (typeof KILL_SIGNALS)[number];

/**
 * A signal name as a model may write it (`term`, `INT`, `sigkill`, `SIGHUP`) in canonical form.
 * Numbers are refused: their meaning differs between platforms (SIGUSR1 is 10 on Linux, 30 on macOS).
 */
export function normalizeSignal(raw: string): KillSignal {
  const upper = raw.trim().toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  if ((KILL_SIGNALS as readonly string[]).includes(name)) return name as KillSignal;
  const why = /^\d+$/.test(raw.trim()) ? "signal numbers differ between platforms; use a name" : `unknown signal "${metadataLine(raw)}"`;
  throw new ExecRequestError(`kill_session: ${why}. Accepted: ${KILL_SIGNALS.join(", ")} (also written as TERM, int, sigkill…).`);
}
