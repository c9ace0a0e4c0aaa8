/**
 * Exit wakes a person disarmed from the sessions picker, for the tool rows drawn before it: a row
 * that said `wake armed` says `wake disarmed` from then on (rows are drawn from the result's
 * `details`, which cannot change, so the row asks here and redraws when told). Session ids are never
 * reused within a Pi process, so an id names one job for as long as this set lives.
 */

const disarmed = new Set<number>();
const listeners = new Set<() => void>();

/** The person disarmed the exit wake of `jobId`: every row that said it was armed redraws. */
export function exitWakeDisarmedByPerson(jobId: number): void {
  disarmed.add(jobId);
  for (const listener of [...listeners]) listener();
}

/** Whether the person disarmed this session's exit wake. */
export function isExitWakeDisarmed(sessionId: unknown): boolean {
  return typeof sessionId === "number" && disarmed.has(sessionId);
}

/** Calls `listener` on every disarm by the person; returns an unsubscribe. */
export function onExitWakeDisarmed(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
