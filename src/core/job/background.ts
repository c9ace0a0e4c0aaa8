import { groupHasMembers } from "../processes/process-group.ts";
import { commandLineOf, membersOf, stillMember } from "../processes/process-table.ts";
import { BACKGROUND_COMMAND_CHARS, BACKGROUND_NAMED, BACKGROUND_PROBE_MS, BACKGROUND_SETTLE_MS } from "../shared/constants.ts";

/**
 * What holds a job after its shell exited: on pipes the shell's process group (a non-interactive
 * shell keeps `cmd &` in it), on a PTY the terminal's session. A process that left with `setsid`
 * is in neither, and does not hold the job.
 */
export type HoldScope = "group" | "session";

/** One process a job's shell left running, for the `background:` line. */
export interface BackgroundProcess {
  pid: number;
  /** Its command line, bounded; absent when withheld (a person typed into the job: it may hold what they typed). */
  command?: string;
}

/** The processes a job's shell left running: how many, the first few named. */
export interface Background {
  /** Every pid, ascending: the set a result compares with what it showed before. */
  pids: number[];
  named: BackgroundProcess[];
}

/**
 * The living processes of `leader`'s group (PTY: session) once the leader is gone; empty when there
 * are none, and on Windows, which has no groups (a job there ends with its shell, as before). On
 * pipes `kill(-group, 0)` answers first, so a job with no background costs one system call.
 */
export function survivorsOf(leader: number, scope: HoldScope): number[] {
  if (process.platform === "win32") return [];
  if (scope === "group" && !groupHasMembers(leader)) return [];
  return membersOf(leader, scope);
}

/**
 * A job whose shell exited while processes of it still run: it watches them until the last one ends
 * (every {@link BACKGROUND_PROBE_MS}, or at once when told a stream closed), then calls `ended` once.
 * A check looks at the processes already known one by one, and reads the whole table only when none
 * of them is left (to find what they started meanwhile).
 */
export class BackgroundWatch {
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
    private readonly events: {
      /** Nothing of the job runs any more. */
      ended(): void;
      /** The call that saw the shell exit should return now (see {@link BACKGROUND_SETTLE_MS}). */
      settled(): void;
    },
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

  /** The settle window after the shell's exit is over: later calls wait as on any running job. */
  get settleOver(): boolean {
    return this.isSettled;
  }

  /** A result has told what runs on: no later wait ends at the settle window. */
  endSettle(): void {
    this.isSettled = true;
    clearTimeout(this.settleTimer);
  }

  /** Looks now whether anything of the job still runs; calls `ended` once nothing does. */
  check(): void {
    if (this.over) return;
    this.known = this.known.filter((pid) => stillMember(pid, this.leader, this.scope));
    if (this.known.length === 0) this.known = membersOf(this.leader, this.scope);
    if (this.known.length > 0) return;
    this.stop();
    this.events.ended();
  }

  /**
   * What runs on right now (a fresh look at the table): counted, the first {@link BACKGROUND_NAMED}
   * named. Nothing running is the job's end, whoever looks: `ended` is called and undefined returned.
   */
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
