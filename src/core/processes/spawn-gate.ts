/**
 * At most one process spawn per turn of the event loop, process-wide. On Linux, Node's `spawn` forks
 * the whole Pi process synchronously (3–5 ms at Pi's size, much more under load); a parallel batch of
 * sixteen calls used to fork sixteen times in one turn, a single stall of 170 ms in which no output
 * was read and no timer fired. Through the gate each spawn has a turn of its own, with the loop's I/O
 * (every job's output, Pi's own work) handled between two of them.
 *
 * - `claim()`: the caller may spawn now (nothing spawned this turn and nobody is waiting); the turn
 *   is taken. A lone call never waits.
 * - `turn()`: resolves in a later turn that is the caller's alone; spawn before yielding again.
 * - `whenIdle(task)`: speculative work (a warm shell) runs in a turn no waiting spawn wanted; a task
 *   that returns false spawned nothing, and the turn stays free for a call's spawn.
 *
 * A turn ends with the next check phase after the one the spawn happened in, so a poll phase (the
 * jobs' output) always lies between two spawns. The gate lives on `globalThis`: every runtime of the
 * process shares one event loop, also across `/reload`.
 */

class SpawnGate {
  private busy = false;
  private readonly waiting: (() => void)[] = [];
  private readonly idleTasks: (() => boolean | undefined)[] = [];
  private scheduled = false;

  claim(): boolean {
    if (this.busy || this.waiting.length > 0) return false;
    this.take();
    return true;
  }

  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  whenIdle(task: () => boolean | undefined): void {
    this.idleTasks.push(task);
    this.schedule();
  }

  private take(): void {
    this.busy = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Two hops: from a spawn in the poll phase the first check phase comes before any new I/O.
    setImmediate(() => setImmediate(() => this.next()));
  }

  private next(): void {
    this.scheduled = false;
    this.busy = false;
    const waiter = this.waiting.shift();
    if (waiter) {
      this.take();
      waiter();
      return;
    }
    const task = this.idleTasks.shift();
    if (!task) return;
    this.take();
    try {
      if (task() === false) this.busy = false;
    } catch {
      // Speculative work must never break the loop; its owner notices that nothing started.
    }
  }
}

const KEY = Symbol.for("pi-unified-exec/spawn-gate");

/** The process-wide gate. */
export function spawnGate(): SpawnGate {
  const holder = globalThis as { [KEY]?: SpawnGate };
  holder[KEY] ??= new SpawnGate();
  return holder[KEY];
}

export type { SpawnGate };
