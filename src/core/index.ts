/**
 * The core's entry: everything the Pi layer uses of it, and nothing else. The core owns processes,
 * bytes and time and says *job*; the Pi layer maps a job to the model's `session_id` at its boundary.
 */
export type { AskTheUser, CallContext } from "./attached-call.ts";
export type { CallKind, ObservedExit, Receipt, SetOnExitStatus } from "./completion/completion-ledger.ts";
export { INPUT_WAKE_LINE_CHARS } from "./completion/job-wakes.ts";
export { PATTERN_WAKE_BUDGET, PATTERN_WAKE_COOLDOWN_S, type PatternWakeJob } from "./completion/pattern-wakes.ts";
export type { InputWakeJob, WakeBatch, WakeJob, WakeSender } from "./completion/wake-delivery.ts";
export { checkUntilListening } from "./conditions/listen-watch.ts";
export type { ReadMatchList } from "./conditions/read-matches.ts";
export { cutAround } from "./conditions/until-pattern.ts";
export type { Background } from "./job/background.ts";
export type { Job, JobExit, StopReason } from "./job/job.ts";
export type { TypingSession, UserInput } from "./job/job-holders.ts";
export type { UnreadTally } from "./job/job-output.ts";
export type { JobListing, JobReport, JobSnapshot, KillReport, SlotUse, WaitProgress } from "./job/job-snapshot.ts";
export type { Termination } from "./job/job-stop.ts";
export { type HumanView, humanView } from "./job/job-view.ts";
export type { DisarmedWake } from "./job/person-news.ts";
export { omissionMarker } from "./output/head-tail-buffer.ts";
export { newlinesIn } from "./output/printed-tally.ts";
export type { Elision, ShownPart } from "./output/shown-part.ts";
export { isInvisible, metadataLine, visibleText } from "./output/visible-text.ts";
export { aliveGroups } from "./processes/process-group.ts";
export { holdSignalsWhile } from "./processes/signal-hold.ts";
export { KILL_SIGNALS, normalizeSignal } from "./processes/signals.ts";
export { decodeEscapes } from "./request/escapes.ts";
export {
  compileWakePattern,
  type ExecParams,
  type HostShellSettings,
  prepareExec,
  prepareWrite,
  type WriteParams,
} from "./request/request.ts";
export { SHELL_NAMES } from "./request/shell.ts";
export { emptyPollCapMs } from "./request/wait-policy.ts";
export { ExecRuntime, type PatternStatus, type ShutdownReport, type WakeChange, type WakeChangeResult } from "./runtime.ts";
export type { ScreenView } from "./screen/job-screen.ts";
export type { KeyModes } from "./screen/terminal-screen.ts";
export * from "./shared/constants.ts";
export { ExecRequestError, UnknownJobError, WaitRequestError } from "./shared/errors.ts";
