import type { Job } from "./job.ts";

/**
 * The jobs the model can address by `session_id`. Ids are allocated at spawn, count up from 1 and are
 * never reused within a runtime, so a stale id can never reach a newer job. A job becomes addressable
 * only once published (it outlived the early-exit grace); an id whose job exited inside the grace is
 * spent without ever being exposed.
 */
export class JobRegistry {
  private nextId = 1;
  private readonly published = new Map<number, Job>();

  allocateId(): number {
    return this.nextId++;
  }

  publish(job: Job): void {
    this.published.set(job.id, job);
  }

  get(id: number): Job | undefined {
    return this.published.get(id);
  }

  /** Forgets a job whose exit has been reported. */
  remove(id: number): void {
    this.published.delete(id);
  }

  jobs(): Job[] {
    return [...this.published.values()];
  }

  get size(): number {
    return this.published.size;
  }
}
