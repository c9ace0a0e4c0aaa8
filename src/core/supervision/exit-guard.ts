/**
 * The last line of defence: when the Node process exits without Pi having shut the session down (an
 * SDK host that never emits `session_shutdown`, a crash in another extension, `process.exit`), every
 * job still alive would be orphaned, since jobs lead their own process groups. One process-wide
 * `exit` handler, installed once even across `/reload`, SIGKILLs what is left: an `exit` handler
 * cannot wait for a graceful stop.
 */

interface Guarded {
  /** Synchronously kills whatever of this runtime is still alive. */
  killNow(): void;
}

const KEY = Symbol.for("pi-unified-exec/exit-guard");

function guarded(): Set<Guarded> {
  const holder = globalThis as { [KEY]?: Set<Guarded> };
  if (!holder[KEY]) {
    const set = new Set<Guarded>();
    holder[KEY] = set;
    process.once("exit", () => {
      for (const runtime of set) runtime.killNow();
    });
  }
  return holder[KEY];
}

/** Protects `runtime` until `release` is called (its orderly shutdown). */
export function guardAtExit(runtime: Guarded): () => void {
  const set = guarded();
  set.add(runtime);
  return () => set.delete(runtime);
}
