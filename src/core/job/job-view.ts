import type { ScreenView } from "../screen/job-screen.ts";
import { VIEW_LOG_LINES } from "../shared/constants.ts";
import type { Job } from "./job.ts";

/**
 * What the human's view of a job shows (the sessions picker's "view"), without the model and without
 * consuming anything the model has not read: a PTY job's screen, or the last lines of a pipe job's
 * output — the same bytes as its log's end, read from memory, controls stripped.
 */
export type HumanView = { kind: "screen"; screen: ScreenView } | { kind: "output"; lines: string[] };

export async function humanView(job: Job): Promise<HumanView> {
  const screen = await job.screenView(true);
  if (screen) return { kind: "screen", screen };
  const lines = job.previewText().split("\n");
  if (lines.at(-1) === "") lines.pop();
  return { kind: "output", lines: lines.slice(-VIEW_LOG_LINES) };
}
