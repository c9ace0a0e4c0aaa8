import type * as NodePty from "@homebridge/node-pty-prebuilt-multiarch";
import { signalGroup } from "../processes/process-group.ts";
import { type PtySpawnSpec, signalName, type Transport, type TransportEvents } from "./types.ts";

/**
 * ConPTY on Windows, through node-pty's terminal object (its native layer there is a different one,
 * and none of the POSIX read and write problems apply). Not run on this project's Linux machines:
 * only the Windows CI matrix exercises it.
 */
export class WindowsPtyTransport implements Transport {
  readonly kind = "pty" as const;
  readonly pid: number;
  readonly stdinIdentity = undefined;
  private readonly terminal: NodePty.IPty;
  private closed = false;

  constructor(spec: PtySpawnSpec, events: TransportEvents, pty: typeof NodePty) {
    const options = { name: "xterm-256color", cols: spec.cols, rows: spec.rows, cwd: spec.cwd, env: spec.env, useConpty: true };
    this.terminal = pty.spawn(spec.file, [...spec.args], options as NodePty.IWindowsPtyForkOptions);
    this.pid = this.terminal.pid;
    // An unhandled 'error' on the terminal's socket would crash the whole Pi process.
    (this.terminal as unknown as NodeJS.EventEmitter).on?.("error", () => {});
    this.terminal.onData((data: string | Buffer) => events.data(typeof data === "string" ? Buffer.from(data) : data));
    // node-pty reports the exit once its output pipe is done, so nothing more is read after it.
    this.terminal.onExit(({ exitCode, signal }) => {
      events.exit(signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null });
      this.closed = true;
      events.closed();
    });
  }

  groups(): number[] {
    return [this.pid];
  }

  signal(signal: NodeJS.Signals): boolean {
    return signalGroup(this.pid, signal);
  }

  write(bytes: Buffer): Promise<void> {
    // ConPTY takes text.
    this.terminal.write(bytes.toString("utf8"));
    return Promise.resolve();
  }

  closeInput(): void {
    this.terminal.write("\x04");
  }

  resize(cols: number, rows: number): void {
    if (!this.closed) this.terminal.resize(cols, rows);
  }

  pause(): void {
    this.terminal.pause();
  }

  resume(): void {
    this.terminal.resume();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.terminal.kill();
  }
}
