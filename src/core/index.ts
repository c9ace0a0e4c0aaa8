/**
 * The core's entry: everything the Pi layer uses of it, and nothing else. The core owns processes,
 * bytes and time and says *job*; the Pi layer maps a job to the model's `session_id` at its boundary.
 */
export type { CallContext } from "./attached-call.ts";
export type { CallKind, ObservedExit, Receipt } from "./completion-ledger.ts";
export * from "./constants.ts";
export { ExecRequestError, UnknownJobError, WaitRequestError } from "./errors.ts";
export { decodeEscapes } from "./escapes.ts";
export { omissionMarker } from "./head-tail-buffer.ts";
export type { Job, JobExit, StopReason } from "./job.ts";
export type { ScreenView } from "./job-screen.ts";
export type { JobListing, JobReport, JobSnapshot, KillReport, SlotUse, WaitProgress } from "./job-snapshot.ts";
export type { Termination } from "./job-stop.ts";
export { type HumanView, humanView } from "./job-view.ts";
export { aliveGroups } from "./process-group.ts";
export { type ExecParams, type HostShellSettings, prepareExec, prepareWrite, type WriteParams } from "./request.ts";
export { ExecRuntime, type ShutdownReport } from "./runtime.ts";
export { SHELL_NAMES } from "./shell.ts";
export type { Elision, ShownPart } from "./shown-part.ts";
export { holdSignalsWhile } from "./signal-hold.ts";
export { KILL_SIGNALS, normalizeSignal } from "./signals.ts";
export { isInvisible, metadataLine, visibleText } from "./visible-text.ts";
export { emptyPollCapMs } from "./wait-policy.ts";
export type { SetOnExitStatus, WakeBatch, WakeJob, WakeSender } from "./wakes.ts";
