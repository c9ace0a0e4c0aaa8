/**
 * What the model is told about screens: the `screen` parameter of both tools and the
 * prompt guidelines for driving full-screen programs. Strings only; the tool definitions include them.
 */

/** `screen` on `exec_command`. */
export const EXEC_SCREEN_DESCRIPTION =
  "tty: true only. true: the result shows the terminal's screen as a person would see it (its rows as text, " +
  "view: screen and cursor: row,col in the header) instead of the output stream; for programs that redraw in place " +
  "(top, watch, progress dashboards). Programs on the alternate screen (vim, less, htop) show their screen without it; " +
  "false forces the stream.";

/** `screen` on `write_stdin`. */
export const WRITE_SCREEN_DESCRIPTION =
  "tty sessions only. true: the result shows the terminal's current screen (rows as text, view: screen and " +
  "cursor: row,col in the header) instead of the output since the previous call; that output still counts as read " +
  "and stays in the log. While a program is on the alternate screen (vim, less, htop) results show the screen " +
  "anyway (view: screen (alternate screen)); false forces the stream.";

export const SCREEN_GUIDELINES: readonly string[] = [
  "exec_command: drive full-screen programs (vim, less, htop, menus) with tty: true; their results show the screen " +
    "(view: screen). Send keys with write_stdin (\\e is Esc, \\r is Enter) and read the screen the result returns; " +
    "pass until_quiet_ms (e.g. 300) to return once it has redrawn. For programs that redraw without the alternate screen " +
    "(top, watch), pass screen: true.",
];
