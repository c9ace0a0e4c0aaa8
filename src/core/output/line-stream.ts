import { LINE_TEST_CHARS } from "../shared/pattern-limits.ts";
import type { LineCells } from "./line-cells.ts";
import { type CarriedLine, renderCarryingLine } from "./terminal-text.ts";
import { TextBuilder } from "./text-builder.ts";
import { codePointBefore, SPECIAL_IN_TEXT } from "./visible-text.ts";

const CR = 0x0d;

/**
 * An unfinished line longer than this goes out as text (a line's test looks at its first and last
 * {@link LINE_TEST_CHARS} / 2 characters only): a 20 MB line is not kept whole. A CR after that
 * redraws only what came after the cut, as when each read was rendered on its own.
 */
const MAX_CARRIED_CHARS = LINE_TEST_CHARS;

/** A local binding: a loader that compiles imports to getters (tsx, jiti) would call one per use. */
const SPECIAL = SPECIAL_IN_TEXT;

/**
 * A job's output rendered for a reader that judges each line once it is whole (`wake_on_pattern`'s
 * watch). Complete lines come out exactly as a read of all the output renders them; the unfinished
 * last line stays here until its line break — as text, or as cells with the cursor where the output
 * left it once a CR redraws it. So a progress bar redrawn over many reads comes out as its final
 * state, where `TerminalText`, which renders each read's lines on their own for results, would join
 * the states of every read into one line.
 *
 * A CR that ends a write is held back with it: only the next write tells a redraw from a CRLF.
 */
export class LineStream {
  private held = "";
  private last: number | undefined;
  private line: CarriedLine;
  private spare: LineCells | undefined;

  /** `line`: the unfinished line the output continues, as text ("" at a line start). */
  constructor(line = "") {
    this.line = line;
  }

  /** Something is held back for the next write (part of a control sequence, or a CR). */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** The complete lines `input` finishes (each with its LF); what follows the last line break is kept. */
  write(input: string): string {
    let text = this.held ? this.held + input : input;
    this.held = "";
    let crs = "";
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) === CR) end--;
    if (end < text.length) {
      crs = text.slice(end);
      text = text.slice(0, end);
    }
    let out: string;
    SPECIAL.lastIndex = 0;
    if (typeof this.line === "string" && !SPECIAL.test(text)) out = this.plain(this.line, text);
    else {
      const pass = renderCarryingLine(text, this.last, this.line, this.spare);
      if (pass.heldFrom !== -1) this.held = text.slice(pass.heldFrom);
      this.last = codePointBefore(text, pass.heldFrom === -1 ? text.length : pass.heldFrom) ?? this.last;
      this.line = pass.line;
      this.spare = pass.spare;
      out = pass.text;
    }
    this.held += crs;
    const width = typeof this.line === "string" ? this.line.length : this.line.width;
    if (width > MAX_CARRIED_CHARS) out += this.takeLine();
    return out;
  }

  /** The unfinished line as it shows now ("" when the output stands at a line start). */
  pending(): string {
    if (typeof this.line === "string") return this.line;
    const text = new TextBuilder();
    this.line.render(text);
    return text.result();
  }

  /** Forgets the unfinished line: the reader passed over the text that ends it. */
  dropLine(): void {
    if (typeof this.line !== "string") this.spare = this.line;
    this.line = "";
  }

  /** Text without a control or an invisible character, after the plain line `line`. */
  private plain(line: string, text: string): string {
    this.last = codePointBefore(text, text.length) ?? this.last;
    const lf = text.lastIndexOf("\n");
    if (lf === -1) {
      this.line = line + text;
      return "";
    }
    this.line = text.slice(lf + 1);
    return line + (lf === text.length - 1 ? text : text.slice(0, lf + 1));
  }

  /** The unfinished line, rendered and let go. */
  private takeLine(): string {
    const text = this.pending();
    this.dropLine();
    return text;
  }
}
