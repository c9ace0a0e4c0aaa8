import { constants as osConstants } from "node:os";
import type { LeaderExit } from "../transport/types.ts";
import { type Background, BackgroundWatch, survivorsOf } from "./background.ts";
import { ExitDrain } from "./exit-drain.ts";

/** Where a job is in its life: see {@link JobEnding}. */
export type JobState = "running" | "background" | "draining" | "final";

/** How the shell exited while what it started runs on. */
export interface ShellExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the ending needs of its job. */
export interface EndingHost {
  readonly pid: number | undefined;
  readonly tty: boolean;
  /** Nothing of the job runs and its output is read: fix the exit (once; later calls are ignored). */
  finish(failure?: string): void;
}

/** The leader's exit code; 128 + the signal's number when a signal ended it. */
export function exitCodeOf({ code, signal }: LeaderExit): number | null {
  return code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : null);
}

/**
 * How a job ends once its leader (the shell) exits. `running` while the leader lives; `background`
 * while processes it left in the job's process group (PTY: session) run on, watched by
 * {@link BackgroundWatch} — the job ends with the last of them; `draining` while its last output is
 * read ({@link ExitDrain}); `final` once the job fixed its exit. The leader's exit is kept: it is the
 * job's exit code whenever the job ends.
 */
export class JobEnding {
  state: JobState = "running";
  leaderExit: LeaderExit | undefined;
  /** The transport said `closed`: nothing more will be read. */
  streamsClosed = false;
  /** True while output reading is paused for the log to catch up. */
  paused = false;
  private readonly drain = new ExitDrain(() => this.host.finish());
  private background: BackgroundWatch | undefined;
  private readonly settleListeners = new Set<() => void>();

  constructor(private readonly host: EndingHost) {}

  /** The leader exited: the job ends now, or when what it left running ends. */
  leaderExited(exit: LeaderExit, failure?: string): void {
    this.leaderExit = exit;
    const pid = this.host.pid;
    const scope = this.host.tty ? "session" : "group";
    const members = failure || pid === undefined ? [] : survivorsOf(pid, scope);
    if (failure || pid === undefined || members.length === 0) {
      this.startDrain(failure);
      return;
    }
    this.state = "background";
    this.background = new BackgroundWatch(pid, scope, members, {
      ended: () => this.startDrain(),
      settled: () => {
        const listeners = [...this.settleListeners];
        this.settleListeners.clear();
        for (const listener of listeners) listener();
      },
    });
  }

  /** Every stream closed: a draining job ends now; one in `background` looks whether its processes just ended. */
  closed(): void {
    this.streamsClosed = true;
    this.drain.cancel();
    if (this.state === "draining") this.host.finish();
    else if (this.state === "background") this.background!.check();
  }

  /** A chunk arrived (the drain's quiet window starts over). */
  data(): void {
    this.drain.data();
  }

  pause(): void {
    this.paused = true;
    this.drain.pause();
  }

  resume(): void {
    this.paused = false;
    this.drain.resume();
  }

  /** The exit is being fixed: nothing more is watched or timed. */
  fixing(): void {
    this.drain.cancel();
    this.background?.stop();
    this.settleListeners.clear();
  }

  /**
   * Calls `listener` once when a shell exit that leaves processes running has had its settle window:
   * a wait that sees the shell exit ends then. Nothing comes once that window is over (or a result
   * told it) or the job is ending: a later wait is a wait on a running job like any other.
   */
  onBackgroundSettled(listener: () => void): () => void {
    const pending = this.state === "running" || (this.state === "background" && !this.background!.settleOver);
    if (!pending) return () => {};
    this.settleListeners.add(listener);
    return () => this.settleListeners.delete(listener);
  }

  /** A result has told that the shell exited and what runs on: later waits are plain waits. */
  backgroundReported(): void {
    this.background?.endSettle();
    this.settleListeners.clear();
  }

  /** The shell's exit while processes it left run on; undefined in any other state. */
  get shellExit(): ShellExit | undefined {
    const exit = this.leaderExit;
    return this.state === "background" && exit ? { code: exitCodeOf(exit), signal: exit.signal } : undefined;
  }

  /**
   * What the shell left running: looked up now (`fresh`), else as last looked up; undefined in any
   * other state, and once a look found nothing running (the job ends then).
   */
  backgroundNow(withhold: boolean, fresh = true): Background | undefined {
    if (this.state !== "background") return undefined;
    const processes = (!fresh && this.background!.latest) || this.background!.look(withhold);
    return this.state === "background" ? processes : undefined;
  }

  /** Nothing of the job runs any more: read its last output, then fix the exit. */
  private startDrain(failure?: string): void {
    this.state = "draining";
    if (failure || this.streamsClosed) this.host.finish(failure);
    else this.drain.start(this.paused);
  }
}
