import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { spawnStdio } from "../processes/fd-hygiene.ts";
import { linuxStartTime } from "../processes/process-identity.ts";
import { WATCHDOG_COMMAND_CHARS, WATCHDOG_RESTARTS, WATCHDOG_STOP_WAIT_MS } from "../shared/constants.ts";

/**
 * The host side of a runtime's watchdog (POSIX): a `/bin/sh` process (`watchdog.sh`) in its own
 * session, holding a pipe only this process writes to. The host tells it each job's process group
 * as the job starts, when the leader exits and when the group is proven empty; if the pipe closes
 * without a goodbye, the host is gone and the watchdog stops what is left. The watchdog also keeps
 * the runtime's registry file for a later Pi process's startup sweep.
 *
 * Nothing here may cost a job or crash Pi: a watchdog that cannot start, dies or stops reading is
 * noted (`failure`) and the jobs run on without it. Windows has no watchdog.
 */

const SCRIPT = fileURLToPath(new URL("./watchdog.sh", import.meta.url));

/** A fixed, minimal environment: the script needs only `cat`, `ps`, `getconf`, `mv` and `sleep`. */
const WATCHDOG_ENV = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", LC_ALL: "C" };

/** A command as one short line of the protocol (the registry shows it in the sweep's notice). */
function protocolText(command: string): string {
  const line = command
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .trim()
    .slice(0, WATCHDOG_COMMAND_CHARS);
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
    this.registrations.set(pgid, registration);
    // A watchdog started now learns every registration from the replay, this one included.
    if (this.running) this.replay(registration);
    else this.ensureRunning();
  }

  /** The group's leader exited: from now on the group is ours only while it holds older processes. */
  leaderExited(pgid: number): void {
    const registration = this.registrations.get(pgid);
    if (!registration || registration.leaderExited) return;
    registration.leaderExited = true;
    registration.exitedMono = performance.now();
    if (this.running) this.send(exitLine(registration));
  }

  /** The group is proven empty: its id may be reused from now on, so it must never be signalled. */
  forget(pgid: number): void {
    if (!this.registrations.delete(pgid)) return;
    if (this.running) this.send(`- ${pgid}\n`);
  }

  /**
   * Orderly shutdown (the jobs were stopped): the watchdog exits without touching anything. Settles
   * once it has exited (at most {@link WATCHDOG_STOP_WAIT_MS}), so it never outlives Pi's shutdown.
   */
  stop(): Promise<void> {
    this.stopped = true;
    this.registrations.clear();
    const child = this.child;
    if (!this.running || !child) return Promise.resolve();
    const exited = new Promise<void>((resolve) => {
      // A timer that is referenced keeps Pi's loop alive for the wait (the child and its pipe are not).
      const timer = setTimeout(resolve, WATCHDOG_STOP_WAIT_MS);
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
    if (this.starts > WATCHDOG_RESTARTS) return false;
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
    for (const registration of this.registrations.values()) this.replay(registration);
    return true;
  }

  private replay({ pgid, start, command, leaderExited, exitedMono }: Registration): void {
    // A start time the watchdog would have to look up now could name a later process with that pid.
    const known = leaderExited && start === "?" ? "-" : start;
    this.send(`+ ${pgid} ${known} ${command}\n`);
    if (leaderExited) this.send(exitLine({ pgid, exitedMono }));
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
