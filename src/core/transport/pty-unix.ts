/*
 * PTYs on Linux and macOS: node-pty's native `fork` starts the child, and the rest is ours, because
 * node-pty's terminal object loses data and can hang Pi: it destroys the socket 200 ms after the
 * exit; libuv reports end of file while the kernel still holds up to ~12 KiB (every slow-reader run
 * lost the end: we read on until EIO); a write the child does not read spins on EAGAIN (ours go
 * through the thread pool and retry); and closing the master while the leader exits turns its exit
 * into SIGHUP (we hold the slave side open until the leader is reaped).
 */
import { closeSync, constants as fsConstants, write as fsWrite, openSync, readSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { ReadStream } from "node:tty";
import { holdMaster, ptyCommand, releaseMaster } from "../processes/fd-hygiene.ts";
import { jobGroups, signalGroup } from "../processes/process-group.ts";
import { READ_BUFFER_BYTES } from "./output-reader.ts";
import { type PtySpawnSpec, signalName, type Transport, type TransportEvents } from "./types.ts";

/** A full PTY input buffer answers EAGAIN with no event for room: writes retry after a delay doubling up to this. */
const PTY_WRITE_RETRY_MAX_MS = 50;

/** node-pty's native binding on POSIX (not public API; the package is pinned exactly). */
export interface NativePty {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): { fd: number; pid: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

export class UnixPtyTransport implements Transport {
  readonly kind = "pty" as const;
  readonly pid: number;
  readonly stdinIdentity: string;
  private readonly fd: number;
  /** A wrapper leads the session and runs the shell as its child (fd-hygiene.ts, `HOLDER`). */
  private readonly holds: boolean;
  /** The signals sent to the shell's groups, by number. */
  private readonly sent = new Set<number>();
  private readonly reader: ReadStream;
  /** Our descriptor of the terminal's slave side, held until the leader is reaped. */
  private slave: number | undefined;
  private state: "reading" | "draining" | "closed" = "reading";
  private exited = false;
  private closedPending = false;
  private paused = false;
  private drainTimer: NodeJS.Timeout | undefined;
  /** Writes running in the thread pool: the master must not be closed (and its number reused) under them. */
  private writesInFlight = 0;
  private closeWhenIdle = false;

  constructor(
    spec: PtySpawnSpec,
    private readonly events: TransportEvents,
    private readonly native: NativePty,
    helperPath: string,
  ) {
    const command = ptyCommand(spec.file, spec.args, { ...spec.env, PWD: spec.cwd });
    const env = Object.entries(command.env)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([key, value]) => `${key}=${value}`);
    const { file, args } = command;
    this.holds = command.holds;
    // The exit callback runs on the main thread after node-pty's waiter thread reaped the leader.
    const term = native.fork(file, args, env, spec.cwd, spec.cols, spec.rows, -1, -1, true, helperPath, (code, signal) =>
      this.onReaped(code, signal),
    );
    this.fd = term.fd;
    this.pid = term.pid;
    this.stdinIdentity = term.pty;
    holdMaster(this.fd);
    try {
      // Opened before this turn of the event loop ends, so even a leader that already exited cannot
      // make the master hang up before it is reaped. Close-on-exec, like everything Node opens.
      this.slave = openSync(term.pty, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch {
      // Without it the exit status may rarely read as SIGHUP; the output is still read in full.
    }
    // allowHalfOpen: libuv's early end of file must not close the master before we read the rest.
    this.reader = new ReadStream(this.fd, { allowHalfOpen: true });
    this.reader.on("data", (chunk: Buffer) => this.events.data(chunk));
    this.reader.on("end", () => this.drain());
    // An unhandled 'error' would crash Pi; any read error means the same as the end: drain what is left.
    this.reader.on("error", () => this.drain());
    this.reader.on("close", () => this.finishClose());
  }

  groups(): number[] {
    return jobGroups(this.pid);
  }

  signal(signal: NodeJS.Signals): boolean {
    let groups = this.groups();
    if (this.holds) {
      // The wrapper that holds the session ends as the shell does: a signal it took first would end it
      // early and report the signal, not what the shell did with it (a trap, a clean exit). SIGKILL
      // reaches it last: its end would hang up the terminal's foreground group before that group's end.
      this.sent.add(osConstants.signals[signal]);
      const wrapper = signal === "SIGKILL" && groups.includes(this.pid) ? [this.pid] : [];
      groups = [...groups.filter((group) => group !== this.pid), ...wrapper];
    }
    let reached = false;
    for (const group of groups) reached = signalGroup(group, signal) || reached;
    return reached;
  }

  write(bytes: Buffer): Promise<void> {
    // Ctrl-\ sends the foreground group SIGQUIT: a code 131 after it is that signal (see `onReaped`).
    if (this.holds && bytes.includes(0x1c)) this.sent.add(osConstants.signals.SIGQUIT);
    return new Promise((resolve, reject) => {
      let offset = 0;
      let delay = 1;
      const attempt = () => {
        if (this.state === "closed") return reject(new Error("the terminal is closed"));
        this.writesInFlight++;
        fsWrite(this.fd, bytes, offset, bytes.length - offset, null, (error, written) => {
          this.writesInFlight--;
          if (this.closeWhenIdle && this.writesInFlight === 0) this.reader.destroy();
          if (error && errnoCode(error) === "EAGAIN") {
            // The terminal's input buffer is full (the program is not reading): try again later.
            setTimeout(attempt, delay).unref();
            delay = Math.min(delay * 2, PTY_WRITE_RETRY_MAX_MS);
            return;
          }
          if (error) return reject(error);
          offset += written;
          delay = 1;
          if (offset >= bytes.length) resolve();
          else attempt();
        });
      };
      attempt();
    });
  }

  closeInput(): void {
    void this.write(Buffer.of(0x04)).catch(() => {});
  }

  resize(cols: number, rows: number): void {
    if (this.state === "closed") return;
    this.native.resize(this.fd, cols, rows);
  }

  pause(): void {
    this.paused = true;
    if (this.state === "reading") this.reader.pause();
  }

  resume(): void {
    this.paused = false;
    if (this.state === "reading") this.reader.resume();
    else if (this.state === "draining") this.drain();
  }

  close(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.drainTimer);
    this.releaseSlave();
    this.closeMaster();
  }

  private onReaped(code: number, signal: number): void {
    this.exited = true;
    // The wrapper exits with 128 + N for a shell killed by signal N: N it was, if we sent it.
    if (this.holds && !signal && code > 128 && this.sent.has(code - 128)) signal = code - 128;
    this.events.exit(signal ? { code: null, signal: signalName(signal) } : { code, signal: null });
    // Now the terminal may hang up: once no process holds its slave side, the master reads EIO.
    this.releaseSlave();
    if (this.closedPending) this.events.closed();
  }

  private releaseSlave(): void {
    if (this.slave === undefined) return;
    closeSync(this.slave);
    this.slave = undefined;
  }

  /** Reads what the kernel still holds after libuv's end of file, until EIO; EAGAIN: someone opened the terminal again, look later. */
  private drain(): void {
    if (this.state === "closed") return;
    this.state = "draining";
    clearTimeout(this.drainTimer);
    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    while (!this.paused) {
      let count: number;
      try {
        count = readSync(this.fd, buffer, 0, buffer.length, null);
      } catch (error) {
        if (errnoCode(error) === "EAGAIN") {
          this.drainTimer = setTimeout(() => this.drain(), PTY_WRITE_RETRY_MAX_MS);
          return;
        }
        break; // EIO: everything is read
      }
      if (count === 0) break;
      this.events.data(Buffer.from(buffer.subarray(0, count)));
    }
    if (this.paused) return; // `resume` continues the drain
    this.state = "closed";
    this.closeMaster();
  }

  /** Closes the master through the reader, once no write in the thread pool still uses its number. */
  private closeMaster(): void {
    if (this.writesInFlight === 0) this.reader.destroy();
    else this.closeWhenIdle = true;
  }

  private finishClose(): void {
    this.state = "closed";
    releaseMaster(this.fd);
    this.releaseSlave();
    // `closed` comes after `exit`, as the contract says, even if the reader ended first.
    if (this.exited) this.events.closed();
    else this.closedPending = true;
  }
}
