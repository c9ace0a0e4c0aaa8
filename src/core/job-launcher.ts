import { randomBytes } from "node:crypto";
import { Job } from "./job/job.ts";
import type { LogDirectory } from "./log/job-log.ts";
import type { ExecRequest } from "./request/request.ts";
import { JOB_MARKER_ENV } from "./shared/constants.ts";
import { guardAtExit, type OrphanGuard } from "./supervision/orphan-guard.ts";
import { JobStarter } from "./transport/spawn.ts";
import type { WarmShells } from "./transport/warm-shells.ts";

/**
 * Starts one runtime's jobs: the spawn spec with the job's marker, the start path (a warm shell, or a
 * spawn in an event-loop turn of its own) and the process-exit guard, armed once the runtime has a job
 * to protect and released at its shutdown. The runtime owns ids, admission and everything after the start.
 */
export class JobLauncher {
  /** Marks this runtime's jobs in their environment (with the job id), so escaped descendants are found. */
  readonly token = randomBytes(6).toString("hex");
  private readonly starter: JobStarter;
  /** Releases the process-exit guard; set while this runtime has jobs to protect. */
  private unguard: (() => void) | undefined;

  constructor(
    private readonly logs: LogDirectory,
    orphans: OrphanGuard,
    warmShells: boolean | undefined,
    /** SIGKILLs every tracked job at once: what the exit guard does when Pi exits without a shutdown. */
    private readonly killTracked: () => void,
  ) {
    this.starter = new JobStarter(orphans, warmShells);
  }

  /** The warm shells' counters and idle shell (tests, benchmark). */
  get warmShells(): Pick<WarmShells, "counts" | "idle" | "idleCount" | "enabled"> {
    return this.starter.warm;
  }

  /** Starts job `id` (see {@link JobStarter}); `admit` runs again if the start had to wait for its turn. */
  async launch(id: number, request: ExecRequest, admit: () => void): Promise<Job> {
    const spec = {
      file: request.shell.path,
      args: request.invocation.args,
      verbatim: request.invocation.verbatim,
      cwd: request.cwd,
      env: { ...request.env, [JOB_MARKER_ENV]: `${this.token}:${id}` },
      ...(request.terminal && request.pty ? { terminal: { size: request.terminal, pty: request.pty } } : {}),
    };
    const { transport, startedMono } = await this.starter.factory(spec, request.shell.name, admit);
    let job: Job;
    try {
      job = new Job({
        id,
        command: request.command,
        cwd: request.cwd,
        logs: this.logs,
        program: request.shell.path,
        timeoutMs: request.timeoutMs,
        ...(request.terminal ? { terminal: request.terminal } : {}),
        ...(startedMono !== undefined ? { startedMono } : {}),
        transport,
      });
    } catch (error) {
      // No job, so no call will end for it: the starter's count of calls at once must not keep it.
      this.starter.callEnded();
      throw error;
    }
    this.unguard ??= guardAtExit({
      killNow: () => {
        this.killTracked();
        this.starter.killNow();
      },
    });
    return job;
  }

  /** A call ended: the next warm shell may start (off the call's path). True when no other call is starting or running a job. */
  callEnded(): boolean {
    this.starter.callEnded();
    return this.starter.callsInFlight === 0;
  }

  /** At shutdown: no more warm shells, and the exit guard released (the runtime stops its jobs itself). */
  stop(): void {
    this.starter.stop();
    this.unguard?.();
    this.unguard = undefined;
  }
}
