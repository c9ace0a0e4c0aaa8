/**
 * The conditions of one conditional wait together: `until_pattern` (a {@link LineWatch}) and
 * `until_quiet_ms` (a {@link QuietWatch}), sharing one view of the PTY echo so the typed command
 * neither matches nor counts as output. Owns which condition ended the wait (the first one met);
 * the caller still races it against the exit, the window's end, a cancel and a steer.
 *
 * Interface (one per call that has `until_pattern` and/or `until_quiet_ms`; times are monotonic ms):
 * - `new UntilConditions({ pattern?, quietMs? }, { partialLine?, onMet?, clock? })`: `pattern` from
 *   `compileUntilPattern`, `quietMs` from `checkQuietMs` (both validated before anything runs);
 *   `partialLine` as for `LineWatch`; `onMet(outcome)` is called once, when the first condition is met
 *   (synchronously from `begin`/`feed` for a match, from the watch's timer for quiet).
 * - `begin(unread, unreadSince, now, redrawn?)`: the call begins with `unread`, the rendered output
 *   buffered but not yet returned (may be ""), last printed at `unreadSince`. Returns the outcome if
 *   met already. `redrawn` (here and in `feed`): the text starts with the unfinished line redrawn
 *   whole, replacing what the line had.
 * - `wrote(written)`: after the call wrote `written` to a PTY (not for pipes, which do not echo).
 * - `feed(text, now, redrawn?)`: each rendered chunk as it arrives. Returns the outcome when this chunk meets a
 *   condition. For `matched`, `outcome.match.end` is the index in this `text` just after the matched
 *   line: return the output up to there, keep the rest unread.
 * - `outcome`: the condition that was met, once one was. `stop()`: the wait ended; cancels the timer.
 */
import { type LineMatch, LineWatch } from "./line-watch.ts";
import type { ListenTarget } from "./listen-watch.ts";
import { EchoFilter } from "./pty-echo.ts";
import { type QuietClock, QuietWatch, realClock } from "./quiet-watch.ts";
import type { LinePattern } from "./until-pattern.ts";

export type UntilOutcome = { status: "matched"; match: LineMatch } | { status: "quiet" };

export interface UntilSpec {
  pattern?: LinePattern | undefined;
  quietMs?: number | undefined;
  /** `until_listening`: watched by a {@link ListenWatch} beside these (it reads sockets, not output). */
  listening?: ListenTarget | undefined;
}

export interface UntilOptions {
  partialLine?: string;
  onMet?: (outcome: UntilOutcome) => void;
  clock?: QuietClock;
  /** `until_pattern` cost more than its share of the output and stopped matching (line-watch.ts). */
  onSuspend?: () => void;
}

export class UntilConditions {
  private readonly lines: LineWatch | undefined;
  private readonly quiet: QuietWatch | undefined;
  private readonly echo = new EchoFilter();
  private met: UntilOutcome | undefined;

  constructor(
    spec: UntilSpec,
    private readonly options: UntilOptions = {},
  ) {
    const clock = options.clock ?? realClock;
    const lineOptions = {
      partialLine: options.partialLine ?? "",
      now: () => clock.now(),
      ...(options.onSuspend ? { onSuspend: options.onSuspend } : {}),
    };
    this.lines = spec.pattern ? new LineWatch(spec.pattern, lineOptions) : undefined;
    this.quiet = spec.quietMs !== undefined ? new QuietWatch(spec.quietMs, () => this.meet({ status: "quiet" }), clock) : undefined;
  }

  get outcome(): UntilOutcome | undefined {
    return this.met;
  }

  /** When `until_quiet_ms` fires if nothing more is printed (undefined: not counting yet, or no such condition). */
  quietDeadline(): number | undefined {
    return this.quiet?.deadline();
  }

  begin(unread: string, unreadSince: number | undefined, now: number, redrawn = false): UntilOutcome | undefined {
    if (this.met || (unread.length === 0 && !redrawn)) return this.met;
    const matched = this.take(unread, 0, redrawn);
    if (matched || !this.quiet) return matched;
    // Unread output is new to this call: the quiet time counts from when it was printed.
    this.quiet.start(now, unreadSince ?? now);
    return this.quiet.quiet(now) ? this.meet({ status: "quiet" }) : undefined;
  }

  wrote(written: string): void {
    this.echo.expect(written);
  }

  feed(text: string, now: number, redrawn = false): UntilOutcome | undefined {
    if (this.met || (text.length === 0 && !redrawn)) return undefined;
    const echoChars = this.echo.take(text);
    if (echoChars < text.length) this.quiet?.output(now);
    return this.take(text, echoChars, redrawn);
  }

  stop(): void {
    this.quiet?.stop();
  }

  private take(text: string, echoChars: number, redrawn: boolean): UntilOutcome | undefined {
    const match = this.lines?.feedAfterEcho(text, echoChars, redrawn);
    return match ? this.meet({ status: "matched", match }) : undefined;
  }

  private meet(outcome: UntilOutcome): UntilOutcome | undefined {
    if (this.met) return undefined;
    this.met = outcome;
    this.quiet?.stop();
    this.options.onMet?.(outcome);
    return outcome;
  }
}
