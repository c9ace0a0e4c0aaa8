import type { Job } from "./job.ts";
import { type StepPlan, type StepResult, writtenText } from "./job-types.ts";

/**
 * One call's turn: resize the terminal first (what the input starts sees the new size), start the
 * conditional wait (it sees the output not yet returned first), send the input within the window,
 * wait, then take the output — up to and including a matched line; what follows stays unread. A
 * cancelled call reads nothing, so the job stays exactly as it was for the next call.
 */
export async function stepJob(job: Job, plan: StepPlan): Promise<StepResult> {
  if (plan.resize && !job.ending) job.resize(plan.resize);
  const watch = plan.until ? job.watchUntil(plan.until, plan.readListening) : undefined;
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
