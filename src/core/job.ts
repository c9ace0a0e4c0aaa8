import { constants as osConstants } from "node:os";
import { POST_EXIT_DRAIN_MS } from "./constants.ts";
import { HeadTailBuffer, type RetainedOutput } from "./head-tail-buffer.ts";
import { PipeTransport } from "./transport/pipe.ts";
import type { LeaderExit, SpawnSpec, Transport } from "./transport/types.ts";

export type JobStatus = "running" | "exited";

export interface JobSpec extends SpawnSpec {
  id: number;
  /** The command as the model wrote it (for reports; the transport runs `file args`). */
  command: string;
}

/** Final state of a job, fixed once the exit is known and the output drained. */
export interface JobExit {
  /** The leader's exit code; for a death by signal, 128 + the signal number, as a shell reports it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the job never ran, or failed in a way the exit code cannot say. */
  failure?: string;
}

/**
 * One command's process and everything known about it: state, output retained between reads, and
 * the exit. The exit is the leader's exit, reported once the output streams close or
 * {@link POST_EXIT_DRAIN_MS} has passed, whichever is first, so a backgrounded descendant that keeps
 * the pipe open never delays it. Output that arrives later is still retained and counted.
 */
export class Job {
  readonly id: number;
  readonly command: string;
  readonly cwd: string;
  /** Wall-clock start (epoch ms), for display. */
  readonly startedAt = Date.now();
  /** Monotonic start (performance.now()), for every duration. */
  readonly startedMono = performance.now();
  private readonly transport: Transport;
  private readonly output = new HeadTailBuffer();
  private totalBytes = 0;
  private lastOutputMono: number | undefined;
  private leaderExit: LeaderExit | undefined;
  private final: JobExit | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private readonly exitListeners = new Set<() => void>();

  constructor(spec: JobSpec) {
    this.id = spec.id;
    this.command = spec.command;
    this.cwd = spec.cwd;
    this.transport = new PipeTransport(spec, {
      data: (chunk) => {
        this.totalBytes += chunk.length;
        this.lastOutputMono = performance.now();
        this.output.push(chunk);
      },
      exit: (exit) => {
        this.leaderExit = exit;
        if (exit.error) {
          this.finish(`could not start ${spec.file} in ${spec.cwd}: ${exit.error.message}`);
          return;
        }
        this.drainTimer = setTimeout(() => this.finish(), POST_EXIT_DRAIN_MS);
      },
      closed: () => {
        if (this.leaderExit) this.finish();
      },
    });
  }

  get status(): JobStatus {
    return this.final ? "exited" : "running";
  }

  /** True once the leader has exited, even while the last output is still being drained. */
  get leaderExited(): boolean {
    return this.leaderExit !== undefined;
  }

  /** The exit, once final; undefined while the job runs (or drains its last output). */
  get exit(): JobExit | undefined {
    return this.final;
  }

  get pid(): number | undefined {
    return this.transport.pid;
  }

  get pgid(): number | undefined {
    return this.transport.pgid;
  }

  /** Every output byte since spawn, including bytes retention dropped. */
  get outputBytesTotal(): number {
    return this.totalBytes;
  }

  /** Milliseconds since the last output byte (since spawn when there was none). */
  quietMs(nowMono: number = performance.now()): number {
    return Math.max(0, Math.round(nowMono - (this.lastOutputMono ?? this.startedMono)));
  }

  /** The output retained since the previous call; the buffer starts over. */
  takeOutput(): RetainedOutput {
    return this.output.drain();
  }

  /** Calls `listener` once when the exit becomes final (at once if it already is). Returns an unsubscribe. */
  onExit(listener: () => void): () => void {
    if (this.final) {
      listener();
      return () => {};
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** Signals the job's process group. False when the group is already empty. */
  signal(signal: NodeJS.Signals): boolean {
    return this.transport.signal(signal);
  }

  private finish(failure?: string): void {
    if (this.final || !this.leaderExit) return;
    clearTimeout(this.drainTimer);
    const { code, signal } = this.leaderExit;
    this.final = {
      exitCode: code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : null),
      signal,
      ...(failure ? { failure } : {}),
    };
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener();
  }
}
