/**
 * The core's entry: everything the Pi layer uses of it, and nothing else. The core owns processes,
 * bytes and time and says *job*; the Pi layer maps a job to the model's `session_id` at its boundary.
 */
export type { Receipt, SetOnExitStatus } from "./completion/completion-ledger.ts";
export { INPUT_WAKE_LINE_CHARS } from "./completion/job-wakes.ts";
export { PATTERN_WAKE_BUDGET, PATTERN_WAKE_COOLDOWN_S, type PatternWakeJob } from "./completion/pattern-wakes.ts";
export type { DeafWakeJob, InputWakeJob, WakeBatch, WakeSender } from "./completion/wake-delivery.ts";
export type { AskTheUser, CallContext, CallKind, ObservedExit } from "./job/attached-call.ts";
export type { Job, JobExit, StopReason } from "./job/job.ts";
export type { Background } from "./job/job-ending.ts";
export type { DisarmedWake, TypingSession, UserInput } from "./job/job-holders.ts";
export type { UnreadTally } from "./job/job-output.ts";
export {
  type HumanView,
  humanView,
  type JobListing,
  type JobReport,
  type JobSnapshot,
  type KillReport,
  type PortConflict,
  portConflictText,
  type SlotUse,
  type WaitProgress,
  type WakeJob,
} from "./job/job-snapshot.ts";
export type { Termination } from "./job/job-stop.ts";
export { omissionMarker } from "./output/head-tail-buffer.ts";
export type { Elision } from "./output/output-decoder.ts";
export { newlinesIn } from "./output/printed-tally.ts";
export { isInvisible, metadataLine, visibleText } from "./output/visible-text.ts";
export { cutAround } from "./patterns/line-pattern.ts";
export type { Deafness, Usage } from "./processes/listening.ts";
export { aliveGroups, KILL_SIGNALS, normalizeSignal } from "./processes/process-group.ts";
export { decodeEscapes } from "./request/input.ts";
export {
  compileWakePattern,
  DEFAULT_TIMEOUT_S,
  type ExecParams,
  type HostShellSettings,
  MAX_ASK_USER_CHARS,
  MAX_TIMEOUT_S,
  prepareExec,
  prepareWrite,
  type WriteParams,
} from "./request/request.ts";
export { SHELL_NAMES } from "./request/shell.ts";
export { DEFAULT_CONDITIONAL_WRITE_YIELD_MS, emptyPollCapMs } from "./request/wait-policy.ts";
export { ExecRuntime, type PatternStatus, type ShutdownReport, type WakeChange, type WakeChangeResult } from "./runtime.ts";
export type { ScreenView } from "./screen/job-screen.ts";
export type { KeyModes } from "./screen/terminal-screen.ts";
export { DEFAULT_COLS, DEFAULT_ROWS, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from "./screen/terminal-size.ts";
export * from "./shared/constants.ts";
export { ExecRequestError, UnknownJobError, WaitRequestError } from "./shared/errors.ts";
export { holdSignalsWhile } from "./supervision/tracked-jobs.ts";
export { checkUntilListening } from "./wait/listen-watch.ts";
export type { ReadMatchList } from "./wake-watch/read-matches.ts";
