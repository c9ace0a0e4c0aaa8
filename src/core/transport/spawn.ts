/*
 * transport/ — how a job's processes start and how their bytes move: pipes, PTYs (Unix and ConPTY),
 * warm shells, the joined reads of a pipe, and the one place that picks among them (this file).
 *
 * May import: shared, output, screen, processes, input-wait.
 */
import { signalGroup } from "../processes/process-group.ts";
import { spawnGate } from "../processes/spawn-gate.ts";
import type { TerminalSize } from "../screen/terminal-size.ts";
import { closeDetached } from "./output-reader.ts";
import { type AdoptedChild, PipeTransport } from "./pipe.ts";
import { type LoadedPty, spawnPty } from "./pty.ts";
import type { SpawnSpec, Transport, TransportEvents } from "./types.ts";
import { type WarmShellGuard, WarmShells, warmShellsWanted } from "./warm-shells.ts";

/** Starts a job's process once the job is ready to hear its events. */
export type TransportFactory = (events: TransportEvents) => Transport;

/** What to run and on what: a PTY of `terminal` size through the loaded module, else pipes. */
export interface TransportSpec extends SpawnSpec {
  terminal?: { size: TerminalSize; pty: LoadedPty };
}

/** The factory of a job spawned directly: pipes, a terminal, or (`adopted`) a warm shell already handed the job. */
export function transportFactory(spec: TransportSpec, adopted?: AdoptedChild): TransportFactory {
  const { terminal, ...spawn } = spec;
  if (!terminal) return (events) => new PipeTransport(spawn, events, adopted);
  return (events) => spawnPty({ ...spawn, cols: terminal.size.cols, rows: terminal.size.rows }, events, terminal.pty);
}

function killAdopted({ child, outputs }: AdoptedChild): void {
  for (const output of outputs) closeDetached(output);
  for (const stream of child.stdio) stream?.destroy();
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    signalGroup(child.pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/**
 * How a runtime's jobs start — the only place that picks it: a warm shell already handed the job
 * (no fork on the call's path; see `warm-shells.ts`), or a spawn of its own (pipes or a PTY) in a
 * turn of the event loop that no other spawn uses (see `spawn-gate.ts`).
 */
export class JobStarter {
  readonly warm: WarmShells;
  /** Calls between their job's start and their end: how many run at once (several in one message). */
  private inFlight = 0;

  constructor(guard: WarmShellGuard, warmShells: boolean = warmShellsWanted()) {
    this.warm = new WarmShells(guard, warmShells, () => this.inFlight);
  }

  /**
   * The transport for the next job, once it may start, and when the job began if that was before
   * now (a warm shell's). `shell` names the job's shell (bash and sh may use a warm shell). `admit`
   * runs again before a spawn that had to wait for its turn, and may refuse (throw): meanwhile the
   * registry may have filled or the runtime shut down.
   */
  async factory(spec: TransportSpec, shell: string, admit: () => void): Promise<{ transport: TransportFactory; startedMono?: number }> {
    this.inFlight++;
    try {
      return await this.start(spec, shell, admit);
    } catch (error) {
      this.inFlight--;
      throw error;
    }
  }

  private async start(
    spec: TransportSpec,
    shell: string,
    admit: () => void,
  ): Promise<{ transport: TransportFactory; startedMono?: number }> {
    const adopted = spec.terminal ? undefined : await this.warm.take(spec, shell, this.inFlight);
    if (adopted) {
      try {
        admit();
      } catch (error) {
        // Refused while the shell took the job (the runtime shut down): it must not run unowned.
        killAdopted(adopted);
        throw error;
      }
      // The job's window starts when it was handed over: it may have run since, unread.
      return { transport: transportFactory(spec, adopted), startedMono: adopted.handedMono };
    }
    const gate = spawnGate();
    if (!gate.claim()) {
      await gate.turn();
      admit();
    }
    return { transport: transportFactory(spec) };
  }

  /** Calls between their job's start and their end. */
  get callsInFlight(): number {
    return this.inFlight;
  }

  /** A call whose job started ended: the next warm shells may start (off every call's path). */
  callEnded(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.warm.refill();
  }

  stop(): void {
    this.warm.stop();
  }

  killNow(): void {
    this.warm.killNow();
  }
}
