import { randomBytes } from "node:crypto";
import type { LogDirectory } from "../log/job-log.ts";
import type { ExecRequest } from "../request/request.ts";
import { JOB_MARKER_ENV } from "../shared/constants.ts";
import { JobStarter } from "../transport/spawn.ts";
import type { WarmShellGuard, WarmShells } from "../transport/warm-shells.ts";
import { Job } from "./job.ts";

/**
 * Starts one runtime's jobs: the spawn spec with the job's marker, and the start path (a warm shell,
 * or a spawn in an event-loop turn of its own). The runtime owns ids, admission and what follows.
 */
export class JobLauncher {
  /** Marks this runtime's jobs in their environment (with the job id), so escaped descendants are found. */
  readonly token = randomBytes(6).toString("hex");
  private readonly starter: JobStarter;

  constructor(
    private readonly logs: LogDirectory,
    guard: WarmShellGuard,
    warmShells: boolean | undefined,
  ) {
    this.starter = new JobStarter(guard, warmShells);
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
    return job;
  }

  /** A call ended: the next warm shell may start (off the call's path). True when no other call is starting or running a job. */
  callEnded(): boolean {
    this.starter.callEnded();
    return this.starter.callsInFlight === 0;
  }

  /** No more warm shells. */
  shutdown(): void {
    this.starter.shutdown();
  }

  /** At process exit, with no time for anything else: the idle warm shells are killed. */
  killNow(): void {
    this.starter.killNow();
  }
}
