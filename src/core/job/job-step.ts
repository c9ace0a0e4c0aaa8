import type { ListenReader } from "../conditions/listen-watch.ts";
import type { UntilSpec } from "../conditions/until-conditions.ts";
import type { ShownPart } from "../output/shown-part.ts";
import type { JobInput } from "../request/input.ts";
import type { ScreenView } from "../screen/job-screen.ts";
import type { TerminalSize } from "../screen/terminal-size.ts";
import type { Job, WaitEnd, WaitEnds } from "./job.ts";
import type { OutputDelta } from "./job-output.ts";
import type { InputOutcome } from "./job-stdin.ts";
import { watchUntil } from "./until-watch.ts";

export { watchUntil } from "./until-watch.ts";

/** One call's turn with a job: what to change first, how long to stay, and what else may end it. */
export interface StepPlan extends WaitEnds {
  resize?: TerminalSize;
  input?: JobInput;
  deadlineMono: number;
  /** A conditional wait: return once a line matches, the job goes quiet or it listens. */
  until?: UntilSpec;
  /** Reads the job's listening addresses, for `until_listening`. */
  readListening?: ListenReader;
  /** `screen` as the call gave it: true the screen, false the stream, absent the screen on the alternate screen. */
  screen?: boolean;
  /** What the result can show of the output: a large read is decoded only that far. */
  shown?: ShownPart;
}

/** What a turn did: how its wait ended, what its input came to, and the output since the previous read. */
export interface StepResult {
  end: WaitEnd;
  input?: InputOutcome;
  /** Absent for a cancelled call: it reads nothing. */
  output?: OutputDelta;
  /** The line `until_pattern` matched (bounded), when that ended the wait. */
  matchedLine?: string;
  /** The addresses read by the check `until_listening` ended on, when it did: the result shows them. */
  listening?: string[];
  /** The screen the result shows instead of the stream (PTY jobs; see {@link JobScreen.view}). */
  screen?: ScreenView;
}

/** What a call wrote, as text, for the terminal's echo of it. */
export function writtenText(input: JobInput): string {
  if (input.kind === "bytes") return input.bytes.toString("utf8");
  return input.kind === "interrupt" ? "\x03" : "\x04";
}
/**
 * One call's turn: resize the terminal first (what the input starts sees the new size), start the
 * conditional wait (it sees the output not yet returned first), send the input within the window,
 * wait, then take the output — up to and including a matched line; what follows stays unread. A
 * cancelled call reads nothing, so the job stays exactly as it was for the next call.
 */
export async function stepJob(job: Job, plan: StepPlan): Promise<StepResult> {
  if (plan.resize && !job.ending) job.resize(plan.resize);
  const watch = plan.until ? watchUntil(job, plan.until, plan.readListening) : undefined;
  if (watch && plan.input && job.tty) watch.wrote(writtenText(plan.input));
  const input = plan.input ? await job.send(plan.input, plan.deadlineMono) : undefined;
  let end = await job.wait(plan.deadlineMono, { ...plan, ...(watch ? { condition: watch.met } : {}) });
  watch?.stop();
  // A cancelled call (Esc) gives control back at once and consumes nothing, even an exit it saw.
  if (plan.signal?.aborted) end = "aborted";
  const matchedLine = end === "matched" ? watch?.matchedLine() : undefined;
  const listening = end === "listening" ? watch?.listening() : undefined;
  // Only a match keeps what follows it for the next read; the exit's report carries everything.
  if (end !== "matched") job.endWatch();
  const output = end === "aborted" ? undefined : job.takeOutput(plan.shown);
  const screen = output ? await job.screenView(plan.screen) : undefined;
  return {
    end,
    ...(input ? { input } : {}),
    ...(output ? { output } : {}),
    ...(matchedLine ? { matchedLine } : {}),
    ...(listening ? { listening } : {}),
    ...(screen ? { screen } : {}),
  };
}
