/**
 * What the model is told about handing a prompt to the person at the keyboard (`ask_user` on
 * `write_stdin`), and what it learns back: a count of bytes, never the bytes.
 */
import { MAX_ASK_USER_CHARS } from "../../core/index.ts";

export const ASK_USER_DESCRIPTION =
  `Ask the user to type into this job themselves (1–${MAX_ASK_USER_CHARS} characters: what they should type, shown to them as one line). ` +
  "Use it for passwords, passphrases, 2FA codes and anything only the user knows or should decide. In Pi's terminal they type " +
  "into the job's live screen (a terminal job) or a one-line input; over RPC they answer a dialog. The call waits, with no time limit, " +
  "until they are done, then like any write (yield_time_ms, until_pattern, until_quiet_ms). The result says user_input: N bytes " +
  "(0 bytes (cancelled) when they typed nothing) — you never see what they typed, only what the program printed. " +
  "Not together with chars, chars_b64, cols, rows or yield_until; an error in a print/JSON run.";

export const ASK_USER_GUIDELINES: readonly string[] = [
  "write_stdin: when a job asks for a password, passphrase, 2FA code, or anything only the user knows or should decide (a " +
    "[y/N] you are unsure of), pass ask_user with a short line telling them what to type. Never ask the user to paste a secret " +
    "into the chat, and never type one yourself.",
  "write_stdin: a result with user_typing: true means the user is typing into the job: poll it, do not write to it or kill it.",
];
