import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readStdinIdentity } from "../input-wait/input-wait.ts";
import { pipeCommand, raiseOomScore, spawnStdio } from "../processes/fd-hygiene.ts";
import { jobGroups, signalGroup } from "../processes/process-group.ts";
import { type DetachedPipe, type OutputReader, ReadBatch, readOutput } from "./output-reader.ts";
import type { LeaderExit, SpawnSpec, Transport, TransportEvents } from "./types.ts";

/** A child already started for this job: a warm shell that runs it (see `warm-shell.ts`), its output pipes not read yet. */
export interface AdoptedChild {
  child: ChildProcess;
  outputs: [DetachedPipe, DetachedPipe];
  /** When the job was handed to the shell: it may run from then on, before it is adopted. */
  handedMono: number;
}

/** Starts the spec's process: the child leads a new session and group, its stdio are our pipes. */
function spawnChild(spec: SpawnSpec): ChildProcessWithoutNullStreams {
  const { file, args, raised } = pipeCommand(spec.file, spec.args, spec.env);
  const child = spawn(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    // Beyond the three pipes: /dev/null over any PTY master of another job (see fd-hygiene).
    stdio: spawnStdio(["pipe", "pipe", "pipe"]) as ["pipe", "pipe", "pipe"],
    windowsHide: true,
    windowsVerbatimArguments: spec.verbatim === true,
  }) as ChildProcessWithoutNullStreams;
  if (!raised) raiseOomScore(child.pid);
  return child;
}

/**
 * A process on plain pipes, spawned here or adopted from a warm shell. The child leads a new session
 * and group (a signal to the group reaches every descendant that stayed; no controlling terminal to
 * read a password from); stdin stays open for later writes.
 */
export class PipeTransport implements Transport {
  readonly kind = "pipe" as const;
  readonly pid: number | undefined;
  readonly stdinIdentity: string | undefined;
  private readonly child: ChildProcess;
  private readonly readers: OutputReader[];
  /** Why stdin can no longer be written, once that is known. */
  private inputClosed: string | undefined;

  constructor(spec: SpawnSpec, events: TransportEvents, adopted?: AdoptedChild) {
    const child = adopted?.child ?? spawnChild(spec);
    this.child = child;
    this.pid = child.pid;
    // A warm shell runs its job from its answer on, so the job may have ended before it is adopted.
    const endedBefore = child.exitCode !== null || child.signalCode !== null;
    // libuv returns from spawn once the child has exec'd, so its fd 0 is already our pipe's end.
    this.stdinIdentity = child.pid === undefined || endedBefore ? undefined : readStdinIdentity(child.pid);

    let exit: LeaderExit | undefined;
    let open = 2;
    let closedSent = false;
    // 'closed' comes after the exit and after both output pipes ended (also after a failed spawn).
    const maybeClosed = () => {
      if (open > 0 || !exit || closedSent) return;
      closedSent = true;
      events.closed();
    };
    const reportExit = (leader: LeaderExit) => {
      if (exit) return;
      exit = leader;
      events.exit(leader);
      maybeClosed();
    };
    const onClosed = () => {
      open--;
      maybeClosed();
    };
    // stdout and stderr are delivered as one stream, in the order they were read.
    const batch = new ReadBatch((chunk) => events.data(chunk));
    const sources = adopted?.outputs ?? [child.stdout!, child.stderr!];
    this.readers = sources.map((source) => readOutput(source, batch, onClosed));
    // A child that closes its stdin makes the next write fail with EPIPE. Unhandled, that 'error' event
    // would crash the whole Pi process; the failed write reports it instead.
    child.stdin!.on("error", (error) => {
      this.inputClosed ??= error.message;
    });
    child.on("error", (error) => reportExit({ code: null, signal: null, error }));
    child.on("exit", (code, signal) => reportExit({ code, signal }));
    if (endedBefore) process.nextTick(() => reportExit({ code: child.exitCode, signal: child.signalCode }));
    if (adopted) {
      child.ref();
      (child.stdin as { ref?: () => void } | null)?.ref?.();
      for (const reader of this.readers) reader.ref();
    }
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
      this.child.stdin!.write(bytes, (error) => {
        if (!error) return resolve();
        this.inputClosed ??= error.message;
        reject(error);
      });
    });
  }

  closeInput(): void {
    this.inputClosed ??= "stdin was closed (EOF was sent)";
    this.child.stdin!.end();
  }

  pause(): void {
    for (const reader of this.readers) reader.pause();
  }

  resume(): void {
    for (const reader of this.readers) reader.resume();
  }

  close(): void {
    this.inputClosed ??= "the job's streams were closed";
    this.child.stdin!.destroy();
    for (const reader of this.readers) reader.destroy();
  }
}
