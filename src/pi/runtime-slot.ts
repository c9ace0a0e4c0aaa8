import type { WakeSender } from "../core/completion.ts";
import { ExecRuntime, type ShutdownReport } from "../core/runtime.ts";

/**
 * The Pi session's job runtime, created on the first tool call (activation alone starts nothing) and
 * stopped at session shutdown. A later call after shutdown gets a fresh runtime. The wake sender is
 * bound here, so a runtime created later gets it too.
 */
export class RuntimeSlot {
  private runtime: ExecRuntime | undefined;
  private sender: WakeSender | undefined;

  current(): ExecRuntime {
    if (!this.runtime) {
      this.runtime = new ExecRuntime();
      this.runtime.completion.setSender(this.sender);
    }
    return this.runtime;
  }

  /** The runtime, if one was ever created (events must not create one). */
  existing(): ExecRuntime | undefined {
    return this.runtime;
  }

  /** Binds wake delivery, and sends what waited for it. */
  bindSender(sender: WakeSender): void {
    this.sender = sender;
    this.runtime?.completion.setSender(sender);
    this.runtime?.completion.retry();
  }

  /** Stops every job of the current runtime, if one was ever created. */
  async shutdown(): Promise<ShutdownReport | undefined> {
    const runtime = this.runtime;
    this.runtime = undefined;
    return runtime?.shutdown();
  }
}
