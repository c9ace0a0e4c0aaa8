/*
 * conditions/ — what may end a wait besides the exit and the deadline, and what a line of output
 * may set off: `until_pattern` and its linear-time engine, `until_quiet_ms`, the PTY echo that never
 * matches, the watch a call runs over its output (this file), and whether a job waits for input.
 *
 * May import: shared, output, processes.
 */
import type { RetainedOutput } from "../output/head-tail-buffer.ts";
import { LineStream } from "../output/line-stream.ts";
import { UntilConditions, type UntilOutcome, type UntilSpec } from "./until-conditions.ts";

/**
 * A conditional wait (`until_pattern`, `until_quiet_ms`) watching a job's bytes as they arrive. The
 * conditions judge rendered text — what the model sees — so each chunk is rendered here by a renderer
 * of the watch's own (the model's decoder stays lazy: it decodes only when a call takes output), which
 * carries the unfinished line from chunk to chunk: a line redrawn across chunks (a spinner, a prompt
 * drawn over it) is judged as a terminal finally shows it, not as its frames glued together. When
 * a line matches, the watch says where in the chunk's *bytes* the matched line ends, so the job can
 * return the output up to and including it and keep the rest unread: the byte position is found by
 * counting the line ends after the match, which rendering never adds or removes.
 *
 * Owned here: once a line matched, every later byte up to the end of that line belongs to the call's
 * read and nothing after it does, whenever it arrives before the read is taken. Chunks can keep
 * arriving between the match and the read (the call may still be waiting for its input to be
 * delivered, and a terminal hands a line and its line end, or the next prompt, over in separate
 * reads), so the watch goes on cutting after its match instead of letting them through.
 */
export class ConditionWatch {
  private readonly conditions: UntilConditions;
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly lines: LineStream;
  /** The unfinished line as the conditions were last given it. */
  private given: string;
  /** After a match: the matched line still goes on (it was unfinished), or it has ended. */
  private afterMatch: "line" | "ended" | undefined;

  constructor(spec: UntilSpec, partialLine: string, onMet: (outcome: UntilOutcome) => void, onSuspend?: () => void) {
    this.conditions = new UntilConditions(spec, { partialLine, onMet, ...(onSuspend ? { onSuspend } : {}) });
    this.lines = new LineStream(partialLine);
    this.given = partialLine;
  }

  get outcome(): UntilOutcome | undefined {
    return this.conditions.outcome;
  }

  /**
   * The call begins with `unread` (retained, not yet returned), last printed at `unreadSince`.
   * Returns how many of those retained bytes (head, then tail) the call returns when a line in them
   * already matches; undefined otherwise.
   */
  begin(unread: RetainedOutput, unreadSince: number | undefined, now: number): number | undefined {
    const bytes = Buffer.concat([unread.head, unread.tail]);
    const { text, redrawn } = this.render(bytes);
    const outcome = this.conditions.begin(text, unreadSince, now, redrawn);
    return this.cut(outcome, bytes, text);
  }

  /** After the call wrote to a PTY: the terminal's echo of it never matches. */
  wrote(written: string): void {
    this.conditions.wrote(written);
  }

  /**
   * A chunk arrived: the number of its bytes the call returns when a line in it matches, or when a
   * line matched before it (what ends that line; 0 once it has ended); undefined otherwise.
   */
  feed(chunk: Buffer, now: number): number | undefined {
    if (this.afterMatch) return this.restOfLine(chunk);
    const { text, redrawn } = this.render(chunk);
    return this.cut(this.conditions.feed(text, now, redrawn), chunk, text);
  }

  stop(): void {
    this.conditions.stop();
  }

  /**
   * The text `bytes` add for the conditions: what follows the unfinished line they were given, or,
   * when `bytes` redrew that line (it no longer starts the same), the whole line as it shows now
   * (`redrawn`) and what follows it. Line ends are those of `bytes`, as {@link byteEnd} needs.
   */
  private render(bytes: Buffer): { text: string; redrawn: boolean } {
    const before = this.given;
    const whole = this.lines.write(this.utf8.decode(bytes, { stream: true })) + this.lines.pending();
    this.given = this.lines.pending();
    return whole.startsWith(before) ? { text: whole.slice(before.length), redrawn: false } : { text: whole, redrawn: true };
  }

  /** Where a match cuts `bytes` (rendered as `text`); an unfinished matched line takes what continues it later. */
  private cut(outcome: UntilOutcome | undefined, bytes: Buffer, text: string): number | undefined {
    if (outcome?.status !== "matched") return undefined;
    this.afterMatch = outcome.match.complete ? "ended" : "line";
    return byteEnd(bytes, text, outcome.match.end);
  }

  /** A chunk after the match: the part that ends the matched line, if it is still open; none of the rest. */
  private restOfLine(chunk: Buffer): number {
    if (this.afterMatch === "ended") return 0;
    const lf = chunk.indexOf(0x0a);
    if (lf === -1) return chunk.length;
    this.afterMatch = "ended";
    return lf + 1;
  }
}

/**
 * Where in `bytes` the rendered `text` position `end` falls, for a cut just after a matched line: as
 * many line ends must follow the cut in the bytes as follow `end` in the text. A match that ends the
 * text (an unfinished last line, or the last line of the chunk) takes the whole chunk.
 */
export function byteEnd(bytes: Buffer, text: string, end: number): number {
  if (end >= text.length) return bytes.length;
  let after = 0;
  for (let i = text.indexOf("\n", end); i !== -1; i = text.indexOf("\n", i + 1)) after++;
  // The remainder starts just after the line end that precedes those `after` line ends.
  let at = bytes.length;
  for (let seen = 0; seen <= after; seen++) {
    at = bytes.lastIndexOf(0x0a, at - 1);
    if (at === -1) return 0;
  }
  return at + 1;
}

/** A conditional wait as a call holds it: `met` resolves with the condition that ends it, `matchedLine` names the line. */
export interface UntilHandle {
  met: Promise<"matched" | "quiet">;
  wrote(text: string): void;
  matchedLine(): string | undefined;
}

/** A {@link ConditionWatch} for `spec` (after the unfinished line `partialLine`), and the handle a call holds. */
export function untilWatch(spec: UntilSpec, partialLine: string, onSuspend?: () => void): { watch: ConditionWatch; handle: UntilHandle } {
  let resolve!: (end: "matched" | "quiet") => void;
  const met = new Promise<"matched" | "quiet">((done) => {
    resolve = done;
  });
  const watch = new ConditionWatch(spec, partialLine, (outcome) => resolve(outcome.status), onSuspend);
  return {
    watch,
    handle: {
      met,
      wrote: (text) => watch.wrote(text),
      matchedLine: () => (watch.outcome?.status === "matched" ? watch.outcome.match.line : undefined),
    },
  };
}
