import { MAX_JOBS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import type { Job } from "./job.ts";

/**
 * The jobs of one runtime, in admission order, and their ids. Ids count up from 1 and are never
 * reused, so a stale id can never reach a newer job. A job holds a slot from spawn; it becomes
 * addressable by `session_id` only once published (it outlived the early-exit grace), so an id whose
 * job exited inside the grace is spent without ever being exposed.
 *
 * Capacity: when every slot is taken, completed jobs whose exit nobody has read yet are evicted,
 * oldest first; a live job is never evicted, so when all slots hold live jobs a new one is refused.
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

  /**
   * Frees a slot for a new job if none is free, by evicting the oldest completed, unattached job.
   * Returns what was evicted; throws before anything is spawned when every slot holds a live job.
   */
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

  /**
   * Takes in a finished job of an earlier runtime of the session (handed over at a boundary), published
   * so its id answers once; it is the oldest record, so the first to make room.
   */
  adopt(job: Job): void {
    if (this.slots.size < this.capacity && !this.slots.has(job.id)) this.slots.set(job.id, { job, published: true });
  }

  /**
   * Makes room ({@link makeRoom}) and promises the slot to a job being started: a warm shell may run
   * the command before the start returns, so the slot must be its own from the first check on.
   */
  reserve(): true {
    this.makeRoom();
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
