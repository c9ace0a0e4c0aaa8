import { MAX_JOBS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import type { Job } from "./job.ts";

/**
 * The jobs of one runtime, in admission order. Ids are never reused (a stale id never reaches a newer
 * job); a job holds a slot from spawn and is addressable only once published (it outlived the
 * early-exit grace). When every slot is taken, the oldest unread exits are evicted; a live job never is.
 */
export class JobRegistry {
  private nextId = 1;
  private readonly slots = new Map<number, { job: Job; published: boolean }>();

  /** `ids`: where ids come from when they must stay unique beyond this registry (every runtime of a Pi process). */
  constructor(
    readonly capacity: number = MAX_JOBS,
    private readonly ids?: () => number,
  ) {}

  /** Slots promised to jobs still being started. */
  private reserved = 0;

  /** Evicts the oldest ended, unattached job if no slot is free; throws before any spawn when every slot holds a live job. */
  makeRoom(): Job[] {
    const evicted: Job[] = [];
    for (const [id, { job }] of this.slots) {
      if (this.slots.size + this.reserved < this.capacity) break;
      if (job.exit && !job.attached) {
        this.slots.delete(id);
        evicted.push(job);
      }
    }
    if (this.slots.size + this.reserved >= this.capacity) {
      throw new ExecRequestError(
        `All ${this.capacity} job slots hold running jobs, so nothing was started. Stop jobs you no longer need with ` +
          "kill_session (list_sessions shows them all), or wait for one to finish, then run the command again.",
      );
    }
    return evicted;
  }

  allocateId(): number {
    return this.ids ? this.ids() : this.nextId++;
  }

  /** A finished job an earlier runtime handed over, published so its id answers once (the first to make room). */
  adopt(job: Job): void {
    if (this.slots.size < this.capacity && !this.slots.has(job.id)) this.slots.set(job.id, { job, published: true });
  }

  /** Promises a slot to a job being started: a warm shell may run it before the start returns. `evicted`: each job that made room. */
  reserve(evicted: (job: Job) => void = () => {}): true {
    for (const job of this.makeRoom()) evicted(job);
    this.reserved++;
    return true;
  }

  /** A start failed with `error` (rethrown); the slot it was promised, if any, is free again. */
  startFailed(reserved: boolean, error: unknown): never {
    if (reserved) this.release();
    throw error;
  }

  /** Gives `job` the slot `reserve` promised it. */
  add(job: Job): void {
    this.release();
    this.slots.set(job.id, { job, published: false });
  }

  private release(): void {
    this.reserved = Math.max(0, this.reserved - 1);
  }

  /** Makes the job addressable by its id. */
  publish(id: number): void {
    const slot = this.slots.get(id);
    if (slot) slot.published = true;
  }

  /** A published job by id. */
  get(id: number): Job | undefined {
    const slot = this.slots.get(id);
    return slot?.published ? slot.job : undefined;
  }

  /** The job's leader exited and its last output is still being read: its exit is about to be final. */
  draining(id: number): boolean {
    const job = this.slots.get(id)?.job;
    // Only the last output's drain: a job whose shell left processes running is not about to end.
    return job?.ending === true && job.exit === undefined;
  }

  /** Frees the job's slot (its exit has been reported). */
  remove(id: number): void {
    this.slots.delete(id);
  }

  /** Published jobs, oldest first. */
  jobs(): Job[] {
    return [...this.slots.values()].filter((slot) => slot.published).map((slot) => slot.job);
  }

  /** Slots in use, published or not. */
  get size(): number {
    return this.slots.size;
  }
}
