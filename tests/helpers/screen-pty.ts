/**
 * A command on a real PTY with a TerminalScreen fed by it, wired the way a job wires them: every
 * output chunk to `screen.write` in order, the screen's query answers to the PTY's input while the
 * leader lives, a resize to both. For the screen tests and the screen benchmark.
 */
import { currentShellHost, jobEnvironment, resolveShell } from "../../src/core/request/shell.ts";
import { type ScreenSnapshot, TerminalScreen } from "../../src/core/screen/terminal-screen.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import type { LeaderExit, Transport } from "../../src/core/transport/types.ts";

const bash = resolveShell("bash", currentShellHost()).path;

export interface ScreenJobOptions {
  cols?: number;
  rows?: number;
  cwd?: string;
  /** Added to the job environment (jobEnvironment with tty: true). */
  env?: NodeJS.ProcessEnv;
  /** No emulator: for measuring what the emulator costs. */
  withoutScreen?: boolean;
}

export interface ScreenJob {
  readonly transport: Transport;
  readonly screen: TerminalScreen;
  /** Every byte the job printed so far. */
  raw(): Buffer;
  readonly exited: Promise<LeaderExit>;
  /** Output fully read (after the exit). */
  readonly closed: Promise<void>;
  /** Bytes the screen answered to queries. */
  readonly replies: Buffer[];
  type(text: string): Promise<void>;
  resize(cols: number, rows: number): void;
  /** Polls snapshots until `condition` holds; throws with `what` and the last screen at the deadline. */
  waitForScreen(condition: (snapshot: ScreenSnapshot) => boolean, what: string, timeoutMs?: number): Promise<ScreenSnapshot>;
  /** SIGKILL (if still running), then dispose the screen. */
  stop(): void;
}

export function startOnScreen(command: string, options: ScreenJobOptions = {}): ScreenJob {
  const cols = options.cols ?? 80;
  const rows = options.rows ?? 24;
  const chunks: Buffer[] = [];
  const replies: Buffer[] = [];
  let exited = false;
  let transport: Transport | undefined;
  const screen = new TerminalScreen({
    cols,
    rows,
    onReply: (bytes) => {
      replies.push(bytes);
      if (!exited) void transport?.write(bytes).catch(() => {});
    },
  });
  let onExit!: (exit: LeaderExit) => void;
  let onClosed!: () => void;
  const exitedPromise = new Promise<LeaderExit>((resolve) => {
    onExit = resolve;
  });
  const closedPromise = new Promise<void>((resolve) => {
    onClosed = resolve;
  });
  const env = { ...jobEnvironment(process.env, { tty: true }), ...options.env };
  const pty = spawnPty(
    { file: bash, args: ["-c", command], cwd: options.cwd ?? process.cwd(), env, cols, rows },
    {
      data: (chunk) => {
        chunks.push(chunk);
        if (!options.withoutScreen) screen.write(chunk);
      },
      exit: (exit) => {
        exited = true;
        onExit(exit);
      },
      closed: () => onClosed(),
    },
    loadPtyModule(),
  );
  transport = pty;
  const job: ScreenJob = {
    transport: pty,
    screen,
    raw: () => Buffer.concat(chunks),
    exited: exitedPromise,
    closed: closedPromise,
    replies,
    type: (text) => pty.write(Buffer.from(text, "utf8")),
    resize: (newCols, newRows) => {
      pty.resize?.(newCols, newRows);
      screen.resize(newCols, newRows);
    },
    async waitForScreen(condition, what, timeoutMs = 15_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const snapshot = await screen.snapshot();
        if (condition(snapshot)) return snapshot;
        if (performance.now() > deadline) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen:\n${snapshot.lines.join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop() {
      if (!exited) pty.signal("SIGKILL");
      screen.dispose();
    },
  };
  return job;
}
