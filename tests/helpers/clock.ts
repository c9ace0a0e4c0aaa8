/**
 * A clock whose time moves only when a test says so: `advance(ms)` fires, in order, every timer it
 * passes. It serves the coordinator's wakes (`Clock`) and the watches' timers (`shared/clock.ts`).
 */
export class SteppedClock {
  time = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private next = 1;

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = end;
  }
}
