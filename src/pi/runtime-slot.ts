import { ExecRuntime, type ShutdownReport } from "../core/runtime.ts";

/**
 * The Pi session's job runtime, created on the first tool call (activation alone starts nothing) and
 * stopped at session shutdown. A later call after shutdown gets a fresh runtime.
 */
export class RuntimeSlot {
  private runtime: ExecRuntime | undefined;

  current(): ExecRuntime {
    this.runtime ??= new ExecRuntime();
    return this.runtime;
  }

  /** Stops every job of the current runtime, if one was ever created. */
  async shutdown(): Promise<ShutdownReport | undefined> {
    const runtime = this.runtime;
    this.runtime = undefined;
    return runtime?.shutdown();
  }
}
