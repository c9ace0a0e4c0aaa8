import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { spawnStdio } from "../fd-hygiene.ts";
import { readStdinIdentity } from "../input-wait.ts";
import { jobGroups, signalGroup } from "../process-group.ts";
import type { LeaderExit, SpawnSpec, Transport, TransportEvents } from "./types.ts";

/**
 * Runs a process on plain pipes. The child leads a new session and process group (`detached`, i.e.
 * setsid), so a signal to the group reaches every descendant that stayed in it, and the job has no
 * controlling terminal to read a password prompt from. stdin stays open for later writes.
 */
export class PipeTransport implements Transport {
  readonly kind = "pipe" as const;
  readonly pid: number | undefined;
  readonly stdinIdentity: string | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  /** Why stdin can no longer be written, once that is known. */
  private inputClosed: string | undefined;

  constructor(spec: SpawnSpec, events: TransportEvents) {
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      // Beyond the three pipes: /dev/null over any PTY master of another job (see fd-hygiene).
      stdio: spawnStdio(["pipe", "pipe", "pipe"]) as ["pipe", "pipe", "pipe"],
      windowsHide: true,
      windowsVerbatimArguments: spec.verbatim === true,
    }) as ChildProcessWithoutNullStreams;
    this.child = child;
    this.pid = child.pid;
    // libuv returns from spawn once the child has exec'd, so its fd 0 is already our pipe's end.
    this.stdinIdentity = child.pid === undefined ? undefined : readStdinIdentity(child.pid);

    let exited = false;
    const reportExit = (exit: LeaderExit) => {
      if (exited) return;
      exited = true;
      events.exit(exit);
    };
    child.stdout.on("data", (chunk: Buffer) => events.data(chunk));
    child.stderr.on("data", (chunk: Buffer) => events.data(chunk));
    // A child that closes its stdin makes the next write fail with EPIPE. Unhandled, that 'error' event
    // would crash the whole Pi process; the failed write reports it instead.
    child.stdin.on("error", (error) => {
      this.inputClosed ??= error.message;
    });
    child.on("error", (error) => reportExit({ code: null, signal: null, error }));
    child.on("exit", (code, signal) => reportExit({ code, signal }));
    // 'close' comes after 'exit' once stdout and stderr have ended (also after a failed spawn).
    child.on("close", () => events.closed());
  }

  groups(): number[] {
    return this.pid === undefined ? [] : jobGroups(this.pid);
  }

  signal(signal: NodeJS.Signals): boolean {
    let reached = false;
    for (const group of this.groups()) reached = signalGroup(group, signal) || reached;
    return reached;
  }

  write(bytes: Buffer): Promise<void> {
    if (this.inputClosed) return Promise.reject(new Error(this.inputClosed));
    return new Promise((resolve, reject) => {
      this.child.stdin.write(bytes, (error) => {
        if (!error) return resolve();
        this.inputClosed ??= error.message;
        reject(error);
      });
    });
  }

  closeInput(): void {
    this.inputClosed ??= "stdin was closed (EOF was sent)";
    this.child.stdin.end();
  }

  pause(): void {
    this.child.stdout.pause();
    this.child.stderr.pause();
  }

  resume(): void {
    this.child.stdout.resume();
    this.child.stderr.resume();
  }

  close(): void {
    this.inputClosed ??= "the job's streams were closed";
    this.child.stdin.destroy();
    this.child.stdout.destroy();
    this.child.stderr.destroy();
  }
}
