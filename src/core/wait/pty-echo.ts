/**
 * The echo a terminal gives back for what a call wrote to a PTY: `until_pattern` never matches the
 * typed command, and the echo is not new output for `until_quiet_ms`. Text equal to the expected echo
 * is skipped only at the start of the output after the write, and only while it keeps equalling it.
 */
import { renderTerminalText } from "../output/terminal-text.ts";

/**
 * Characters whose echo depends on the terminal's state or that end the predictable part: erase and
 * kill (they rub out earlier echo), EOF (not echoed), literal-next, reprint, XON/XOFF (swallowed by flow
 * control), discard, and the signal characters (the program prints what follows ^C itself).
 */
const UNPREDICTABLE = new Set([0x03, 0x04, 0x08, 0x0f, 0x11, 0x12, 0x13, 0x15, 0x16, 0x17, 0x1a, 0x1c, 0x7f]);
/** Signal characters: their `^X` is echoed, then the predictable part ends. */
const SIGNALS = new Set([0x03, 0x1a, 0x1c]);

/**
 * What a Linux or macOS terminal in its default mode (canonical input with ECHO, ECHOCTL, ICRNL,
 * ONLCR) echoes for `written`, as rendered text: printable characters as they are, CR and LF as a line
 * break, TAB as TAB, other control characters as `^X` (ESC as `^[`). It stops at the first character
 * whose echo is not predictable (see {@link UNPREDICTABLE}), after the `^C` of a signal character.
 * A program in raw mode that echoes by itself usually prints the same; one that does not (or `stty
 * -echo`) prints something else, and then nothing is skipped.
 */
export function expectedEcho(written: string): string {
  let raw = "";
  for (const ch of written) {
    const code = ch.codePointAt(0)!;
    if (code === 0x0d || code === 0x0a) raw += "\r\n";
    else if (code === 0x09 || code >= 0x20) {
      if (code === 0x7f) break;
      raw += ch;
    } else {
      if (UNPREDICTABLE.has(code)) {
        if (SIGNALS.has(code)) raw += `^${String.fromCharCode(code + 0x40)}`;
        break;
      }
      raw += `^${String.fromCharCode(code + 0x40)}`;
    }
  }
  // The same rendering the output gets: CRLF becomes LF, invisible characters become `<U+XXXX>`.
  return renderTerminalText(raw);
}

export class EchoFilter {
  private expected = "";
  private position = 0;

  /** The call wrote `written` to the terminal: its echo is expected next, after any echo still expected. */
  expect(written: string): void {
    const echo = expectedEcho(written);
    if (!echo) return;
    this.expected = this.expected.slice(this.position) + echo;
    this.position = 0;
  }

  /** True while some echo is still expected. */
  get pending(): boolean {
    return this.position < this.expected.length;
  }

  /**
   * How many leading characters of `text` (the next rendered output, in order) are the expected echo.
   * The first character that differs ends the expectation: the rest is the job's own output.
   */
  take(text: string): number {
    if (!this.pending || text.length === 0) return 0;
    const { expected } = this;
    let n = 0;
    let at = this.position;
    while (n < text.length && at < expected.length && text.charCodeAt(n) === expected.charCodeAt(at)) {
      n++;
      at++;
    }
    if (at === expected.length || n < text.length) {
      // Complete, or something else came: expect nothing more.
      this.expected = "";
      this.position = 0;
    } else {
      this.position = at;
    }
    return n;
  }
}
