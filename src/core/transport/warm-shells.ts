import { spawnGate } from "../processes/spawn-gate.ts";
import { WARM_SHELL_ENV } from "../shared/constants.ts";
import type { AdoptedChild } from "./pipe.ts";
import type { SpawnSpec } from "./types.ts";
import { handoff, WARM_SHELL_NAME, WarmShell, WarmShellUnsupported, type WarmTarget, warmTarget } from "./warm-shell.ts";

/** Largest job handed over: inside the smallest socket buffer (macOS: 8 KiB), so the write never waits. */
const WARM_SHELL_HANDOFF_BYTES = 4 * 1024;
/** While a handed shell has not answered it is sent SIGCONT this often (something may have stopped it). */
const WARM_SHELL_CONTINUE_MS = 1_000;
/** Failures (a shell that could not start, died idle, or could not be handed its job) after which every job spawns directly. */
export const WARM_SHELL_MAX_FAILURES = 3;
/** Idle shells after a burst (a model's calls in one message; each a sleeping bash of a few MiB), back to one after a quiet spell. */
const WARM_SHELL_POOL_MAX = 8;
const WARM_SHELL_POOL_QUIET_MS = 30_000;

/** A warm shell as the guard registers it: its leader (pid, group and session id) and a name. */
export interface GuardedShell {
  pid: number | undefined;
  command: string;
}

/**
 * What keeps a warm shell from outliving Pi: the runtime's watchdog, as for jobs. The runtime passes
 * its orphan guard (supervision/), which takes any such shell; transport does not import it.
 */
export interface WarmShellGuard {
  started(shell: GuardedShell): void;
  leaderExited(shell: GuardedShell): void;
  forgotten(shell: GuardedShell): void;
}

/** Warm shells are on unless `PI_UNIFIED_EXEC_WARM_SHELL=0` (never on Windows). */
export function warmShellsWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.platform !== "win32" && env[WARM_SHELL_ENV]?.trim() !== "0";
}

/**
 * A runtime's warm shells: as many as calls ran at once of late, started for the last pipe job's
 * shell, environment and settings and used only by a job that matches all of them (also while still
 * starting). Nothing starts before the first command, and a refill never lands on a call's path. A
 * shell that no longer matches is discarded; the next starts once the environment looks stable again.
 */
export class WarmShells {
  /** Idle shells, oldest first: one normally, more after a burst of calls (see {@link WARM_SHELL_POOL_MAX}). */
  private shells: WarmShell[] = [];
  /** How many idle shells the calls of late ask for: the most run at once, back to one after a quiet spell. */
  private wanted = 1;
  /** When a job was last taken. */
  private lastTake: number | undefined;
  /** What the next shell is started for (the last job that could use one). */
  private target: WarmTarget | undefined;
  private lastFingerprint: string | undefined;
  private stable = true;
  private failures = 0;
  private refillsQueued = 0;
  private stopped = false;
  /** Jobs handed to a warm shell, and jobs that could have been but spawned (for tests and the benchmark). */
  readonly counts = { handed: 0, missed: 0, started: 0, fallbacks: 0 };

  constructor(
    private readonly guard: WarmShellGuard,
    readonly enabled: boolean = warmShellsWanted(),
    /** Calls whose job is starting or running: a refill (a fork of Pi, 5–40 ms) waits until there are none. */
    private readonly callsInFlight: () => number = () => 0,
  ) {}

  /** Hands the job to a matching idle shell (a ready one first); undefined: spawn it directly. */
  async handOver(spec: SpawnSpec, shell: string, concurrent = 1): Promise<AdoptedChild | undefined> {
    if (!this.enabled || this.stopped) return undefined;
    const target = warmTarget(spec, shell);
    if (!target) return undefined;
    // After a quiet spell the calls of an earlier burst no longer count: back to one shell.
    const now = performance.now();
    if (this.lastTake !== undefined && now - this.lastTake > WARM_SHELL_POOL_QUIET_MS) this.wanted = 1;
    this.lastTake = now;
    // Calls at once (several in one message) ask for as many shells next time; calls one after another need one.
    this.wanted = Math.max(this.wanted, Math.min(WARM_SHELL_POOL_MAX, concurrent));
    const matching = this.shells.filter((idle) => idle.fingerprint === target.fingerprint && idle.takesJobs);
    this.stable = matching.length > 0 || target.fingerprint === this.lastFingerprint || this.lastFingerprint === undefined;
    this.lastFingerprint = target.fingerprint;
    this.target = target;
    // Shells started for another environment will never serve: they go.
    const stale = this.shells.filter((idle) => !matching.includes(idle));
    this.shells = matching;
    if (stale.length > 0) this.counts.missed++;
    for (const idle of stale) idle.discard();
    const idle = matching.find((candidate) => candidate.state === "ready") ?? matching[0];
    if (!idle) return undefined;
    const job = handoff(spec, target);
    // A longer command does not make the shell wrong: keep it.
    if (job.length > WARM_SHELL_HANDOFF_BYTES) {
      this.counts.missed++;
      return undefined;
    }
    this.shells = this.shells.filter((candidate) => candidate !== idle);
    const result = await idle.hand(job, WARM_SHELL_CONTINUE_MS);
    if ("child" in result) {
      this.counts.handed++;
      return result;
    }
    // A workdir the shell could not enter is the job's problem (the direct spawn reports it), not the shell's.
    if (result.failed === "shell") this.failures++;
    this.counts.fallbacks++;
    return undefined;
  }

  /** A call ended: start the shells the calls of late want, each in a turn no spawn wanted and no call is under way. */
  refill(): void {
    if (!this.enabled || this.stopped || !this.target || !this.stable) return;
    if (this.failures >= WARM_SHELL_MAX_FAILURES) return;
    if (this.lastTake !== undefined && performance.now() - this.lastTake > WARM_SHELL_POOL_QUIET_MS) this.wanted = 1;
    while (this.shells.length > this.wanted) this.shells.pop()?.discard();
    for (let missing = this.wanted - this.shells.length - this.refillsQueued; missing > 0; missing--) {
      this.refillsQueued++;
      spawnGate().whenIdle(() => {
        this.refillsQueued--;
        if (this.stopped || !this.target || this.shells.length >= this.wanted || this.callsInFlight() > 0) return false;
        this.start(this.target);
        return true;
      });
    }
  }

  /** The oldest idle shell, if there is one (tests): its pid, and whether it is ready for a job. */
  get idle(): { pid: number | undefined; ready: boolean } | undefined {
    const shell = this.shells[0];
    return shell && { pid: shell.pid, ready: shell.state === "ready" };
  }

  /** Idle shells now (tests, benchmark). */
  get idleCount(): number {
    return this.shells.length;
  }

  /** The idle shells are stopped and none is started again. */
  shutdown(): void {
    this.stopped = true;
    for (const shell of this.shells) shell.discard();
    this.shells = [];
  }

  /** At process exit, with no time for anything else. */
  killNow(): void {
    for (const shell of this.shells) shell.discard();
  }

  private start(target: WarmTarget): void {
    let shell: WarmShell;
    try {
      shell = new WarmShell(target, (lost) => this.lost(lost));
    } catch (error) {
      this.failures = error instanceof WarmShellUnsupported ? WARM_SHELL_MAX_FAILURES : this.failures + 1;
      return;
    }
    this.counts.started++;
    this.shells.push(shell);
    // A shell without a pid was never made: its constructor threw.
    this.guard.started({ pid: shell.pid!, command: WARM_SHELL_NAME });
  }

  /** An idle shell ended (discarded, killed, or its spawn failed): its group is empty once it exited. */
  private lost(shell: WarmShell): void {
    if (this.shells.includes(shell)) {
      this.shells = this.shells.filter((idle) => idle !== shell);
      if (!this.stopped) this.failures++;
    }
    // A bash too old for the bootstrap stays too old: spawn directly from now on.
    if (shell.unsupported) this.failures = WARM_SHELL_MAX_FAILURES;
    const pid = shell.pid;
    if (pid === undefined) return;
    const record = { pid, command: WARM_SHELL_NAME };
    const ended = () => {
      this.guard.leaderExited(record);
      this.guard.forgotten(record);
    };
    shell.child.once("exit", ended);
    if (shell.child.exitCode !== null || shell.child.signalCode !== null) ended();
  }
}
