/**
 * What the model is told about a shell that left processes running (`cmd &`): nothing in the prompt
 * (it costs every request), one hint in the first result that shows a `background:` line.
 */
import type { HintRule } from "./hints.ts";

/** The first time a shell's exit leaves processes running in a job: `&` was not needed. */
export const BACKGROUND_HINT: HintRule = {
  id: "background",
  once: "session",
  applies: ({ report }) => report.job.background !== undefined && !report.job.exit,
  text: "no & needed: a command still running when its window ends returns a session_id; poll it with write_stdin, stop it with kill_session",
};
