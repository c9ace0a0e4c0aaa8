/*
 * screen/ — a PTY job's screen. The flow at a glance:
 * 1. `terminal-size.ts` clamps the PTY's size; the job builds its `JobScreen` (this file) at spawn.
 * 2. Every byte the job prints goes to the headless emulator (`terminal-screen.ts`), in order, bounded.
 * 3. Its answers to terminal queries go back to the PTY while the job lives.
 * 4. A result shows the screen when asked or on the alternate screen; the job's exit frees it.
 *
 * May import: shared, output.
 */
import { type KeyModes, type ScreenSnapshot, TerminalScreen } from "./terminal-screen.ts";

/** Query answers on their way into a PTY: a program that floods queries without reading loses the excess. */
export const SCREEN_REPLY_PENDING_BYTES = 64 * 1024;

/** The screen a result shows instead of the stream: the rows, the cursor, and whether it is the alternate screen. */
export interface ScreenView {
  /** From the top, trailing blanks trimmed, already safe to show (see {@link ScreenSnapshot.lines}). */
  lines: string[];
  /** 1-based. */
  cursor: { row: number; col: number };
  /** The program is on the alternate screen (vim, less): results show the screen unless told otherwise. */
  alternate: boolean;
  /** The program repaints the normal screen by cursor addressing (`top`): results show the screen too. */
  repainting: boolean;
  cols: number;
  rows: number;
}

/** Where a job's screen sends its query answers: the terminal's input, while the job lives. */
export interface ReplySink {
  write(bytes: Buffer): Promise<void>;
  /** False once the job is over: answers parsed late go nowhere. */
  live(): boolean;
}

function viewOf(snapshot: ScreenSnapshot): ScreenView {
  const { lines, cursor, alternate, repainting, cols, rows } = snapshot;
  return { lines, cursor, alternate, repainting, cols, rows };
}

export class JobScreen {
  private readonly screen: TerminalScreen;
  /** Answer bytes handed to the terminal and not yet taken by the OS. */
  private replying = 0;
  private replyDrops = 0;
  private closing = false;

  constructor(size: { cols: number; rows: number }, sink: ReplySink) {
    this.screen = new TerminalScreen({ ...size, onReply: (bytes) => this.reply(bytes, sink) });
  }

  /** Output bytes in the order the job printed them (the buffer is kept until parsed). */
  write(chunk: Buffer): void {
    this.screen.write(chunk);
  }

  /** The PTY was resized: the screen follows after the bytes printed at the old size. */
  resize(cols: number, rows: number): void {
    this.screen.resize(cols, rows);
  }

  /**
   * What a result shows: `asked` true (`screen: true`) always the screen; false (`screen: false`)
   * the stream; absent, the screen while the program is on the alternate screen or repaints the
   * normal one. Resolves once every byte printed before the call is parsed (a bounded wait, see
   * {@link TerminalScreen.snapshot}).
   */
  async view(asked: boolean | undefined): Promise<ScreenView | undefined> {
    if (asked === false) return undefined;
    // Nothing unparsed and a screen that scrolls: the stream, without waiting for a snapshot.
    if (asked === undefined && !this.screen.alternate && !this.screen.repainting && this.screen.pendingBytes === 0) return undefined;
    const snapshot = await this.screen.snapshot();
    return asked || snapshot.alternate || snapshot.repainting ? viewOf(snapshot) : undefined;
  }

  /** The program repaints the normal screen by cursor addressing (see {@link TerminalScreen.repainting}). */
  get repainting(): boolean {
    return this.screen.repainting;
  }

  /**
   * The screen as parsed so far, at once (a person watching it live: the next redraw catches up),
   * and how the program wants keys sent.
   */
  live(): { view: ScreenView; keys: KeyModes } {
    return { view: viewOf(this.screen.peek()), keys: this.screen.keyModes };
  }

  /** Answers dropped because the program did not read earlier ones (see {@link SCREEN_REPLY_PENDING_BYTES}). */
  get droppedReplies(): number {
    return this.replyDrops;
  }

  /** Answer bytes on their way to the terminal right now. */
  get pendingReplyBytes(): number {
    return this.replying;
  }

  /** True once the job is final and the emulator has been (or is being) freed. */
  get closed(): boolean {
    return this.closing;
  }

  /**
   * The job is final: the emulator finishes what it was given, keeps that last screen for the exit's
   * report, and is freed. Nothing more is written to the terminal.
   */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    void this.screen.snapshot().then(() => this.screen.dispose());
  }

  private reply(bytes: Buffer, sink: ReplySink): void {
    if (this.closing || !sink.live()) return;
    if (this.replying + bytes.length > SCREEN_REPLY_PENDING_BYTES) {
      this.replyDrops++;
      return;
    }
    this.replying += bytes.length;
    // A terminal that is gone refuses the write; the answer has nobody to go to then.
    void sink
      .write(bytes)
      .catch(() => {})
      .finally(() => {
        this.replying -= bytes.length;
      });
  }
}
