import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { spawnStdio } from "../processes/fd-hygiene.ts";
import { linuxStartTime } from "../processes/process-table.ts";

/**
 * The host side of a runtime's watchdog (POSIX): `watchdog.sh` in its own session, on a pipe only
 * Pi writes to. It hears each group as the job starts, its leader's exit and its proven end; when the
 * pipe closes without a goodbye it stops what is left, and it keeps the registry for a later sweep.
 * A failing watchdog is noted (`failure`) and never costs a job. What it needs to stop a group goes at
 * once; a warm shell's new name and a leader's exit wait until no call is starting a job (`flush`).
 */

/** Starts after the first, when it died while jobs ran: a broken system must not spin. */
const RESTARTS = 3;
/** An orderly shutdown waits at most this for the dismissed watchdog (a loaded machine may not schedule it for a second). */
const STOP_WAIT_MS = 5_000;
/** A line that may wait waits for calls to pause, at the latest this long. */
export const WATCHDOG_DEFER_MS = 1_000;
/** Characters of a command kept in the registry, for the sweep's notice. */
const COMMAND_CHARS = 200;

const SCRIPT = fileURLToPath(new URL("./watchdog.sh", import.meta.url));

/** A fixed, minimal environment: the script needs only `cat`, `ps`, `getconf`, `mv` and `sleep`. */
const WATCHDOG_ENV = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", LC_ALL: "C" };

/** A command as one short line of the protocol (the registry shows it in the sweep's notice). */
function protocolText(command: string): string {
  const line = command
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .trim()
    .slice(0, COMMAND_CHARS);
  return line || "?";
}

interface Registration {
  pgid: number;
  start: string;
  command: string;
  leaderExited: boolean;
  /** When the host saw the leader's exit (the group was whole until then). */
  exitedMono?: number | undefined;
}

/** The line that reports a leader's exit, with how long ago it was (the watchdog has its own clock). */
function exitLine({ pgid, exitedMono }: Pick<Registration, "pgid" | "exitedMono">): string {
  const ago = exitedMono === undefined ? 0 : Math.max(0, Math.floor(performance.now() - exitedMono));
  return ago > 0 ? `x ${pgid} ${ago}\n` : `x ${pgid}\n`;
}

export class Watchdog {
  private child: ChildProcess | undefined;
  private running = false;
  private stopped = false;
  /** Watchdog processes started (or tried) for this runtime. */
  private starts = 0;
  /** What the host registered and has not forgotten, replayed to a watchdog started again. */
  private readonly registrations = new Map<number, Registration>();
  /** Why the watchdog is not (or no longer) watching, once known. */
  failure: string | undefined;
  /** Host time the last spawn of the watchdog took, in ms (the benchmark reports it). */
  spawnMs: number | undefined;
  /** Lines that may wait, by group, in the order they were queued; see {@link Watchdog.flush}. */
  private readonly waiting = new Map<number, (() => string)[]>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    /** The registry file to keep; undefined when the log directory could not be created. */
    private readonly registryPath: () => string | undefined,
    private readonly platform: NodeJS.Platform = process.platform,
    /** The shell that runs the script (a test names a missing one). */
    private readonly shell: string = "/bin/sh",
  ) {}

  /** The watchdog's pid while it runs. */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /**
   * Registers a job's process group (its leader leads its own session, so pgid = sid = leader pid),
   * starting the watchdog on the first one. On Linux the leader's start time is read here, right
   * after spawn, when the pid cannot yet name another process; elsewhere the watchdog asks `ps`.
   */
  register(pgid: number, command: string): void {
    if (this.platform === "win32" || this.stopped) return;
    const start = linuxStartTime(pgid) ?? (this.platform === "linux" ? "-" : "?");
    // A leader already gone (a PTY child reaped on node-pty's thread): the group was whole until now.
    const gone = start === "-";
    const registration: Registration = {
      pgid,
      start,
      command: protocolText(command),
      leaderExited: gone,
      ...(gone ? { exitedMono: performance.now() } : {}),
    };
    const known = this.registrations.get(pgid);
    this.registrations.set(pgid, registration);
    // The same leader registered again (a warm shell now running its job): covered already, only its name waits.
    const renamed = known !== undefined && !gone && start !== "?" && known.start === start && !known.leaderExited;
    // A watchdog started now learns every registration from the replay, this one included.
    if (this.running) this.replay(registration, renamed);
    else this.ensureRunning();
  }

  /** The group's leader exited: from now on the group is ours only while it holds older processes. */
  leaderExited(pgid: number): void {
    const registration = this.registrations.get(pgid);
    if (!registration || registration.leaderExited) return;
    registration.leaderExited = true;
    registration.exitedMono = performance.now();
    if (this.running) this.later(pgid, () => exitLine(registration));
  }

  /** The group is proven empty: its id may be reused from now on, so it must never be signalled. */
  forget(pgid: number): void {
    if (!this.registrations.delete(pgid)) return;
    this.waiting.delete(pgid);
    if (this.running) this.send(`- ${pgid}\n`);
  }

  /**
   * Sends the lines that waited (a job started from a warm shell, a leader's exit): the runtime calls
   * it once no call is starting a job, and a timer at the latest {@link WATCHDOG_DEFER_MS} after the first.
   */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const lines = [...this.waiting.values()].flat().map((line) => line());
    this.waiting.clear();
    if (this.running && lines.length > 0) this.send(lines.join(""));
  }

  /**
   * Orderly shutdown (the jobs were stopped): the watchdog exits without touching anything. Settles
   * once it has exited (at most {@link STOP_WAIT_MS}), so it never outlives Pi's shutdown.
   */
  stop(): Promise<void> {
    this.stopped = true;
    this.registrations.clear();
    this.waiting.clear();
    clearTimeout(this.flushTimer);
    const child = this.child;
    if (!this.running || !child) return Promise.resolve();
    const exited = new Promise<void>((resolve) => {
      // A timer that is referenced keeps Pi's loop alive for the wait (the child and its pipe are not).
      const timer = setTimeout(resolve, STOP_WAIT_MS);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.send("q\n");
    child.stdin?.end();
    return exited;
  }

  /** Starts the watchdog (again, after it died) and replays what it must know. False when it cannot run. */
  private ensureRunning(): boolean {
    if (this.running) return true;
    if (this.starts > RESTARTS) return false;
    this.starts++;
    const started = performance.now();
    let child: ChildProcess;
    try {
      child = spawn(this.shell, [SCRIPT, this.registryPath() ?? "-", String(process.pid), linuxStartTime(process.pid) ?? "?"], {
        cwd: "/",
        env: WATCHDOG_ENV,
        // Its own session and group: a hangup or Ctrl-C aimed at Pi's terminal or group never reaches it.
        detached: true,
        // Beyond its stdin: /dev/null over any PTY master, so the watchdog never keeps a terminal open.
        stdio: spawnStdio(["pipe", "ignore", "ignore"]) as ["pipe", "ignore", "ignore"],
      });
    } catch (error) {
      this.failure = `the watchdog could not start: ${(error as Error).message}`;
      return false;
    }
    this.spawnMs = performance.now() - started;
    this.child = child;
    this.running = child.pid !== undefined;
    child.on("error", (error) => this.lost(child, `the watchdog could not run: ${error.message}`));
    child.on("exit", (code, signal) => this.lost(child, `the watchdog exited (${signal ?? code})`));
    // A watchdog that died makes the next write fail with EPIPE; unhandled, that would crash Pi.
    child.stdin?.on("error", () => {});
    // Neither the process nor its pipe may keep Pi running.
    child.unref();
    (child.stdin as { unref?: () => void } | null)?.unref?.();
    if (!this.running) return false;
    // The replay says everything that waited, as it is now.
    this.waiting.clear();
    for (const registration of this.registrations.values()) this.replay(registration);
    return true;
  }

  /** Tells the watchdog a registration as it is; `renamed` (the group is known under another name): the line may wait. */
  private replay({ pgid, start, command, leaderExited, exitedMono }: Registration, renamed = false): void {
    // A start time the watchdog would have to look up now could name a later process with that pid.
    const known = leaderExited && start === "?" ? "-" : start;
    const line = `+ ${pgid} ${known} ${command}\n`;
    if (renamed) this.later(pgid, () => line);
    else this.send(line);
    if (leaderExited) this.send(exitLine({ pgid, exitedMono }));
  }

  /** Queues a line that may wait (written when sent, so an exit's line says how long ago it was then). */
  private later(pgid: number, line: () => string): void {
    const queued = this.waiting.get(pgid) ?? [];
    queued.push(line);
    this.waiting.set(pgid, queued);
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), WATCHDOG_DEFER_MS);
    this.flushTimer.unref();
  }

  private lost(child: ChildProcess, why: string): void {
    if (child !== this.child) return;
    const wasRunning = this.running;
    this.running = false;
    if (this.stopped) return;
    this.failure ??= why;
    // Jobs are still running: watch them again at once (bounded, so a broken system does not spin).
    if (wasRunning && this.registrations.size > 0) this.ensureRunning();
  }

  private send(line: string): void {
    try {
      this.child?.stdin?.write(line);
    } catch {
      // The pipe is gone; the exit event restarts the watchdog and replays every registration.
    }
  }
}
