/**
 * At most one process spawn per turn of the event loop, process-wide (on `globalThis`, across
 * `/reload`): Node's `spawn` forks the whole Pi synchronously, and sixteen in one turn stalled the
 * loop 170 ms. `claim()` spawns now if the turn is free (a lone call never waits); `turn()` resolves
 * in a later turn of the caller's own; `whenIdle(task)` runs speculative work (a warm shell) in a turn
 * nobody wanted (`false`: nothing spawned, the turn stays free). A poll phase lies between two spawns.
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
