/**
 * What the model is told about handing a prompt to the person at the keyboard (`ask_user` on
 * `write_stdin`), about a job that waits for input, and about a job the person is typing into.
 * The rule that shapes a first call (never type or ask for a secret in chat) is a prompt guideline;
 * the rest is said in the result that needs it, once (see `hints.ts`).
 */
import { MAX_ASK_USER_CHARS } from "../../core/index.ts";
import type { HintRule } from "./hints.ts";

export const ASK_USER_DESCRIPTION = `Let the user type into the job; say what (≤${MAX_ASK_USER_CHARS} chars). You see a byte count.`;

export const ASK_USER_GUIDELINE = "Never type or ask for a secret in chat: pass write_stdin ask_user.";

/** A job whose terminal hides what is typed: the answer is the person's, once per job. */
export const SECRET_HINT: HintRule = {
  id: "secret",
  once: "job",
  applies: ({ report }) => report.inputWait?.secret === true && !report.job.userTyping,
  text: "the job asks for a secret: ask the person with write_stdin ask_user; text you write into it is refused",
};

/** A job blocked reading its stdin: how to answer it, once per job. */
export const INPUT_WAIT_HINT: HintRule = {
  id: "input-wait",
  once: "job",
  applies: ({ report }) => report.inputWait?.likely === true && !report.inputWait.secret && !report.job.userTyping,
  text: "the job waits for input: answer with chars, pass ask_user for a secret or the user's choice, or kill_session; polling will not move it",
};

/** The person is typing into the job: what the model may do meanwhile, once per session. */
export const USER_TYPING_HINT: HintRule = {
  id: "user-typing",
  once: "session",
  applies: ({ report }) => report.job.userTyping === true,
  text: "the user is typing into this job: poll it; do not write to it or kill it",
};
