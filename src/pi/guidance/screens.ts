/**
 * What the model is told about screens: the `screen` parameter of both tools, and how to send keys,
 * said by the first result that shows a screen (see `hints.ts`).
 */
import type { HintRule } from "./hints.ts";

/** `screen` on `exec_command`. */
export const EXEC_SCREEN_DESCRIPTION = "tty: the screen, not the stream (default for full-screen apps).";

/** `screen` on `write_stdin`. */
export const WRITE_SCREEN_DESCRIPTION = "tty: the screen, not the stream.";

/** The first screen a session shows: how to drive it. */
export const SCREEN_HINT: HintRule = {
  id: "screen-keys",
  once: "session",
  applies: ({ report }) => report.screen !== undefined,
  text: "send keys with write_stdin chars (\\e Esc, \\r Enter, \\e[A Up) and until_quiet_ms: 300 to get the redrawn screen",
};
