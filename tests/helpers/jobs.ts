/**
 * Jobs and processes a unit test starts by hand, outside a runtime: one way to start a `Job` running
 * a bash command (on pipes or on a PTY), one way to wait for its exit, and one cleanup that kills
 * whatever of them is still alive after the file's tests (a failing test leaves nothing behind).
 */
import { after } from "node:test";
import { Job, type WaitEnd, waitForExit } from "../../src/core/job/job.ts";
import { LogDirectory } from "../../src/core/log/job-log.ts";
import { aliveGroups, jobGroups, signalGroup } from "../../src/core/processes/process-group.ts";
import { oneTableFor } from "../../src/core/processes/process-table.ts";
import { currentShellHost, jobEnvironment, resolveShell } from "../../src/core/request/shell.ts";
import { loadPtyModule } from "../../src/core/transport/pty.ts";
import { transportFactory } from "../../src/core/transport/spawn.ts";
import { processAlive } from "./processes.ts";

const bash = resolveShell("bash", currentShellHost());

/**
 * A command whose process leaves its job's process group and session, prints its pid, then sleeps
 * (portable: macOS has no `setsid` command).
 */
export const ESCAPE_GROUP = `python3 -c "import os; os.setsid(); print(os.getpid(), flush=True); os.execvp('sleep', ['sleep', '300'])"`;

/**
 * A shell that starts an {@link ESCAPE_GROUP}-style daemon (sleeping `seconds`) and exits only once the
 * daemon has left the group and its pid is in the output: a fixed pause loses that race when Python
 * starts slowly on a loaded machine.
 */
export function escapedDaemonThenExit(seconds = 300): string {
  const daemon =
    "import os, sys; os.setsid(); print(os.getpid(), flush=True); open(sys.argv[1], 'w').close(); " +
    `os.execvp('sleep', ['sleep', '${seconds}'])`;
  return `f=$(mktemp -u); python3 -c "${daemon}" "$f" & until [ -e "$f" ]; do sleep 0.05; done; rm -f "$f"`;
}

/**
 * A shell that starts Node with `nohup … &` and exits only once Node runs, past the moment Node reset
 * SIGHUP to its default (it does as it starts): a hangup at the shell's exit would end it. No
 * `NODE_OPTIONS`, so no preload of ours can catch the hangup either: the race of `nohup node server.js &`,
 * lost every time.
 */
export function nodeResetThenShellExits(): string {
  const node = `'${process.execPath}'`;
  const script = "require('fs').writeFileSync(process.argv[1], ''); setInterval(() => {}, 1000)";
  return `f=$(mktemp -u); nohup env -u NODE_OPTIONS ${node} -e "${script}" "$f" > /dev/null 2>&1 & until [ -e "$f" ]; do sleep 0.05; done; rm -f "$f"`;
}

export interface StartOptions {
  logs?: LogDirectory;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Runs the job on a PTY of this size (the PTY module must load); pipes otherwise. */
  terminal?: { cols: number; rows: number };
  /** The executable to start instead of bash (a failed spawn), still given `-c command`. */
  program?: string;
}

/** Waits for a job's exit with a generous deadline; resolves how the wait ended. */
export function untilExit(job: Job, timeoutMs = 20_000): Promise<WaitEnd> {
  return waitForExit(job, performance.now() + timeoutMs);
}

/** `running` until the exit is final, then `exited`: for a job, or a snapshot of one (a listing). */
export function statusOf(job: { readonly exit?: object | undefined }): "running" | "exited" {
  return job.exit ? "exited" : "running";
}

/** Kills a job's process group at once (a test ending a job it no longer needs). */
export function killGroup(job: Job): void {
  if (job.pid !== undefined) signalGroup(job.pid, "SIGKILL");
}

/**
 * What one test file started. Create it once at the top of the file: it registers the `after` hook
 * that SIGKILLs every tracked group still alive and every tracked process still running.
 */
export class StartedJobs {
  private readonly jobs: Job[] = [];
  private readonly groups: number[] = [];
  private readonly pids: number[] = [];
  private readonly transports: { signal(signal: NodeJS.Signals): unknown }[] = [];
  private nextId = 1;
  private readonly logs = new LogDirectory();

  constructor() {
    after(() => this.killAll());
  }

  /** Starts `bash -c command` as a job in the test's cwd, tracked for cleanup. */
  start(command: string, options: StartOptions = {}): Job {
    const file = options.program ?? bash.path;
    const cwd = process.cwd();
    const env = options.env ?? process.env;
    const terminal = options.terminal;
    return this.track(
      new Job({
        id: this.nextId++,
        command,
        cwd,
        logs: options.logs ?? this.logs,
        program: file,
        timeoutMs: options.timeoutMs ?? 60_000,
        ...(terminal ? { terminal } : {}),
        transport: transportFactory({
          file,
          args: ["-c", command],
          cwd,
          env,
          ...(terminal ? { terminal: { size: terminal, pty: loadPtyModule() } } : {}),
        }),
      }),
    );
  }

  /** Tracks a job started elsewhere. */
  track<T extends Job>(job: T): T {
    this.jobs.push(job);
    return job;
  }

  /** Tracks a process group (a detached child, a transport's leader). */
  group(pgid: number): void {
    this.groups.push(pgid);
  }

  /** Tracks a process outside every tracked group (a descendant that escaped with setsid). */
  pid(pid: number): void {
    this.pids.push(pid);
  }

  /** Tracks a transport started by hand: SIGKILL reaches every group of its session. */
  transport<T extends { signal(signal: NodeJS.Signals): unknown }>(transport: T): T {
    this.transports.push(transport);
    return transport;
  }

  /** Kills everything tracked that is still alive; also what the `after` hook runs. */
  killAll(): void {
    for (const transport of this.transports) {
      try {
        transport.signal("SIGKILL");
      } catch {
        // Its processes are gone.
      }
    }
    const groups = [...this.jobs.flatMap((job) => (job.pid === undefined ? [] : [job.pid])), ...this.groups];
    // A leader's session may hold other groups (a PTY job's shell runs in one of its own): one table read for all.
    const sessions = oneTableFor(() => aliveGroups([...new Set(groups.flatMap((leader) => jobGroups(leader)))]));
    for (const pgid of sessions) {
      try {
        signalGroup(pgid, "SIGKILL");
      } catch {
        // Gone meanwhile, or not ours to signal: nothing more a cleanup can do.
      }
    }
    for (const pid of this.pids) {
      try {
        if (processAlive(pid)) process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
  }
}

/**
 * Jobs on a PTY (120×30 unless told) tracked by `jobs`, and what each printed so far: reads
 * accumulate, as the model sees them across calls.
 */
export function ptyJobs(jobs: StartedJobs) {
  const transcript = new Map<Job, string>();
  return {
    start: (command: string, cols = 120, rows = 30): Job =>
      jobs.start(command, { env: jobEnvironment(process.env, { tty: true }), terminal: { cols, rows } }),
    seen: (job: Job): string => {
      const text = (transcript.get(job) ?? "") + job.takeOutput().text;
      transcript.set(job, text);
      return text;
    },
  };
}
