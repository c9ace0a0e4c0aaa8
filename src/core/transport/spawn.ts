/*
 * transport/ — how a job's processes start and how their bytes move. The flow at a glance:
 * 1. `JobStarter` (this file) picks how a job starts: a warm shell already handed it (`warm-shells.ts`,
 *    `warm-shell.ts`), else a spawn of its own in a turn of the event loop no other spawn uses.
 * 2. Pipes (`pipe.ts`) or a PTY (`pty.ts`: `pty-unix.ts`, `pty-windows.ts` for ConPTY) run it.
 * 3. A pipe's bytes are read, joined and paced by `output-reader.ts`; a PTY's by its transport.
 * 4. Every transport keeps one contract (`types.ts`): data, then `exit` once, then `closed` once.
 *
 * May import: shared, screen, processes, input-wait.
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

/** How a runtime's jobs start: the only place that picks it. */
export class JobStarter {
  readonly warm: WarmShells;
  /** Calls between their job's start and their end: how many run at once (several in one message). */
  private inFlight = 0;

  constructor(guard: WarmShellGuard, warmShells: boolean = warmShellsWanted()) {
    this.warm = new WarmShells(guard, warmShells, () => this.inFlight);
  }

  /**
   * The next job's transport once it may start, and when the job began if before now (a warm shell's).
   * `admit` runs again before a spawn that waited for its turn, and may throw (the registry filled).
   */
  async factory(spec: TransportSpec, shell: string, admit: () => void): Promise<{ transport: TransportFactory; startedMono?: number }> {
    this.inFlight++;
    let adopted: AdoptedChild | undefined;
    try {
      adopted = spec.terminal ? undefined : await this.warm.handOver(spec, shell, this.inFlight);
      if (adopted) {
        admit();
        // The job's window starts when it was handed over: it may have run since, unread.
        return { transport: transportFactory(spec, adopted), startedMono: adopted.handedMono };
      }
      const gate = spawnGate();
      if (!gate.claim()) {
        await gate.turn();
        admit();
      }
      return { transport: transportFactory(spec) };
    } catch (error) {
      this.inFlight--;
      // Refused while a shell took the job (the runtime shut down): it must not run unowned.
      if (adopted) killAdopted(adopted);
      throw error;
    }
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

  shutdown(): void {
    this.warm.shutdown();
  }

  killNow(): void {
    this.warm.killNow();
  }
}
