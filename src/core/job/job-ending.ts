/*
 * How a job ends once its leader (the shell) exits: `running` → `background` while processes it left
 * in its group (PTY: session) run on, watched until the last ends → `draining` while its last output
 * is read → `final`. The drain confirms its quiet window after the loop's next poll for I/O: a timer
 * alone lost a PTY job's last 178 lines beside CPU burners.
 */
import { constants as osConstants } from "node:os";
import { groupHasMembers } from "../processes/process-group.ts";
import { commandLineOf, membersOf, stillMember } from "../processes/process-table.ts";
import { POST_EXIT_DRAIN_MS } from "../shared/constants.ts";
import type { LeaderExit } from "../transport/types.ts";

/** The drain's cap for a descendant that prints without pause (its later output is still logged). */
export const POST_EXIT_DRAIN_CAP_MS = 2_000;
/** A call that sees the shell exit with processes left waits this much for them (`sleep 0.4 & echo hi` ends within it). */
export const BACKGROUND_SETTLE_MS = 1_000;
/** How often what the shell left is checked when no stream closes to say so: one /proc read while a known member lives. */
const BACKGROUND_PROBE_MS = 100;
/** Processes a `background:` line names (the rest are counted), and characters of each command line. */
const BACKGROUND_NAMED = 3;
const BACKGROUND_COMMAND_CHARS = 60;

export type JobState = "running" | "background" | "draining" | "final";

/** How the shell exited while what it started runs on. */
export interface ShellExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What holds a job after its shell exited: on pipes its group, on a PTY its session (`setsid` leaves both). */
type HoldScope = "group" | "session";

/** One process a job's shell left running; `command` withheld once a person typed into the job. */
export interface BackgroundProcess {
  pid: number;
  command?: string;
}

/** The processes a job's shell left running: every pid ascending (a result compares the set), the first few named. */
export interface Background {
  pids: number[];
  named: BackgroundProcess[];
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

/** The living processes of `leader`'s group or session once it is gone; none on Windows. On pipes `kill(-group, 0)` answers first. */
function survivorsOf(leader: number, scope: HoldScope): number[] {
  if (process.platform === "win32") return [];
  if (scope === "group" && !groupHasMembers(leader)) return [];
  return membersOf(leader, scope);
}

export class JobEnding {
  state: JobState = "running";
  leaderExit: LeaderExit | undefined;
  /** The transport said `closed`: nothing more will be read. */
  streamsClosed = false;
  /** Output reading is paused for the log to catch up. */
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
   * Calls `listener` once when a shell exit that leaves processes running has had its settle window.
   * Nothing comes once that window is over (or a result told it) or the job is ending.
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

  /** What the shell left running: looked up now (`fresh`), else as last looked up; undefined once a look found nothing. */
  backgroundNow(withhold: boolean, fresh = true): Background | undefined {
    if (this.state !== "background") return undefined;
    const processes = (!fresh && this.background!.latest) || this.background!.look(withhold);
    return this.state === "background" ? processes : undefined;
  }

  private startDrain(failure?: string): void {
    this.state = "draining";
    if (failure || this.streamsClosed) this.host.finish(failure);
    else this.drain.start(this.paused);
  }
}

/**
 * Watches what a shell left running until the last process ends, then calls `ended` once. A check
 * looks at the known processes one by one and reads the whole table only when none is left (to find
 * what they started meanwhile).
 */
class BackgroundWatch {
  private known: number[];
  /** What the latest {@link look} found running. */
  latest: Background | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly settleTimer: NodeJS.Timeout;
  private over = false;
  private isSettled = false;

  constructor(
    private readonly leader: number,
    private readonly scope: HoldScope,
    members: number[],
    private readonly events: { ended(): void; settled(): void },
  ) {
    this.known = members;
    // Unref'd: Pi's exit must not wait for a server; shutdown stops it.
    this.timer = setInterval(() => this.check(), BACKGROUND_PROBE_MS);
    this.timer.unref();
    this.settleTimer = setTimeout(() => {
      this.isSettled = true;
      this.events.settled();
    }, BACKGROUND_SETTLE_MS);
    this.settleTimer.unref();
  }

  get settleOver(): boolean {
    return this.isSettled;
  }

  endSettle(): void {
    this.isSettled = true;
    clearTimeout(this.settleTimer);
  }

  /** Looks whether anything of the job still runs; calls `ended` once nothing does. */
  check(): void {
    if (this.over) return;
    this.known = this.known.filter((pid) => stillMember(pid, this.leader, this.scope));
    if (this.known.length === 0) this.known = membersOf(this.leader, this.scope);
    if (this.known.length > 0) return;
    this.stop();
    this.events.ended();
  }

  /** What runs on, from a fresh read of the table. Nothing running is the job's end, whoever looks. */
  look(withhold: boolean): Background | undefined {
    if (this.over) return undefined;
    this.known = membersOf(this.leader, this.scope).sort((a, b) => a - b);
    if (this.known.length === 0) {
      this.stop();
      this.events.ended();
      return undefined;
    }
    const named = this.known.slice(0, BACKGROUND_NAMED).map((pid) => {
      const command = withhold ? undefined : commandLineOf(pid);
      return { pid, ...(command ? { command: bounded(command) } : {}) };
    });
    this.latest = { pids: [...this.known], named };
    return this.latest;
  }

  stop(): void {
    this.over = true;
    clearInterval(this.timer);
    clearTimeout(this.settleTimer);
  }
}

function bounded(command: string): string {
  const chars = [...command];
  return chars.length <= BACKGROUND_COMMAND_CHARS ? command : `${chars.slice(0, BACKGROUND_COMMAND_CHARS - 1).join("")}…`;
}

/**
 * When an exit may be reported while output still flows: once the stream was quiet for
 * {@link POST_EXIT_DRAIN_MS} of reading time (every chunk restarts it; a paused read stops the clock),
 * at most {@link POST_EXIT_DRAIN_CAP_MS}.
 */
export class ExitDrain {
  private state: "idle" | "running" | "paused" | "done" = "idle";
  private quietTimer: NodeJS.Timeout | undefined;
  private capTimer: NodeJS.Timeout | undefined;
  private capLeftMs = POST_EXIT_DRAIN_CAP_MS;
  private runningSince = 0;
  /** Chunks seen, so a window that ran out can tell whether the next poll read any. */
  private chunks = 0;

  constructor(private readonly done: () => void) {}

  /** The leader exited: start the clock (paused if reading is paused). */
  start(paused: boolean): void {
    if (this.state !== "idle") return;
    this.state = "paused";
    if (!paused) this.resume();
  }

  data(): void {
    this.chunks++;
    if (this.state === "running") this.armQuiet();
  }

  pause(): void {
    if (this.state !== "running") return;
    this.state = "paused";
    this.capLeftMs -= performance.now() - this.runningSince;
    this.clearTimers();
  }

  resume(): void {
    if (this.state !== "paused") return;
    this.state = "running";
    this.runningSince = performance.now();
    this.armQuiet();
    this.capTimer = setTimeout(() => this.finish(), Math.max(0, this.capLeftMs));
  }

  /** The streams closed first, or the job is being torn down. */
  cancel(): void {
    this.state = "done";
    this.clearTimers();
  }

  private armQuiet(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.confirmQuiet(), POST_EXIT_DRAIN_MS);
  }

  /** Quiet only if the next poll for I/O reads nothing either (immediates run right after it). */
  private confirmQuiet(): void {
    const seen = this.chunks;
    setImmediate(() => {
      if (this.chunks === seen) this.finish();
    });
  }

  private finish(): void {
    if (this.state !== "running") return;
    this.cancel();
    this.done();
  }

  private clearTimers(): void {
    clearTimeout(this.quietTimer);
    clearTimeout(this.capTimer);
  }
}
