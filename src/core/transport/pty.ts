import { createRequire } from "node:module";
import { constants as osConstants } from "node:os";
import type * as NodePty from "@homebridge/node-pty-prebuilt-multiarch";
import { PTY_MODULE, PTY_MODULE_ENV } from "../constants.ts";
import { ExecRequestError } from "../errors.ts";
import { foregroundGroup, signalGroup } from "../process-group.ts";
import type { SpawnSpec, Transport, TransportEvents } from "./types.ts";

type PtyModule = typeof NodePty;

const requireFromHere = createRequire(import.meta.url);
const loadedModules = new Map<string, PtyModule>();

/**
 * Loads the PTY module on the first `tty: true` (never at activation: it is native code and optional).
 * If it cannot load, pipes keep working and the caller gets an error that says why and how to fix it.
 */
export function loadPtyModule(env: NodeJS.ProcessEnv = process.env): PtyModule {
  const name = env[PTY_MODULE_ENV] || PTY_MODULE;
  const cached = loadedModules.get(name);
  if (cached) return cached;
  try {
    const module = requireFromHere(name) as PtyModule;
    loadedModules.set(name, module);
    return module;
  } catch (error) {
    throw new ExecRequestError(
      `tty: true needs the PTY module ${name}, which could not be loaded: ${(error as Error).message.split("\n")[0]}. ` +
        "Nothing was started; pipes (tty: false) still work. To fix it, reinstall pi-unified-exec with its optional " +
        "dependencies (npm's --omit=optional or --no-optional skips them) on Linux, macOS or Windows, where the module ships prebuilt binaries.",
    );
  }
}

function signalName(signal: number): NodeJS.Signals | null {
  const entry = Object.entries(osConstants.signals).find(([, number]) => number === signal);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

export interface PtySpawnSpec extends SpawnSpec {
  cols: number;
  rows: number;
}

/**
 * Runs a process on a pseudo-terminal: the shell leads its own session with the PTY as its
 * controlling terminal, so Ctrl-C, Ctrl-D and arrows go through the line discipline, and programs
 * that insist on a terminal (REPLs, ssh and sudo prompts, TUIs) work. Output arrives as raw bytes.
 */
export class PtyTransport implements Transport {
  readonly kind = "pty" as const;
  readonly pid: number;
  readonly pgid: number;
  private readonly terminal: NodePty.IPty;

  constructor(spec: PtySpawnSpec, events: TransportEvents, pty: PtyModule) {
    const options = {
      name: "xterm-256color",
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: spec.env,
      // Raw bytes, not strings: the job decodes UTF-8 across reads and logs the exact bytes.
      encoding: null,
      useConpty: true,
    } as NodePty.IWindowsPtyForkOptions;
    this.terminal = pty.spawn(spec.file, [...spec.args], options);
    this.pid = this.terminal.pid;
    this.pgid = this.terminal.pid;
    // An unhandled 'error' on the terminal's socket would crash the whole Pi process.
    (this.terminal as unknown as NodeJS.EventEmitter).on?.("error", () => {});
    this.terminal.onData((data: string | Buffer) => events.data(typeof data === "string" ? Buffer.from(data) : data));
    // node-pty reports the exit once the terminal's output is read (or 200 ms after, when a descendant
    // holds the terminal open), so it never waits on descendants; the job still drains 100 ms after it.
    this.terminal.onExit(({ exitCode, signal }) => {
      events.exit(signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null });
    });
  }

  /** The shell's group, and the terminal's foreground group when a job-control shell moved a program there. */
  groups(): number[] {
    const foreground = process.platform === "win32" ? undefined : foregroundGroup(this.pid);
    return foreground !== undefined && foreground !== this.pgid ? [this.pgid, foreground] : [this.pgid];
  }

  signal(signal: NodeJS.Signals): boolean {
    let reached = false;
    for (const group of this.groups()) reached = signalGroup(group, signal) || reached;
    return reached;
  }

  write(bytes: Buffer): Promise<void> {
    // The Unix terminal writes Buffers as they are; ConPTY takes text.
    this.terminal.write((process.platform === "win32" ? bytes.toString("utf8") : bytes) as string);
    return Promise.resolve();
  }

  /** On a terminal, EOF is Ctrl-D through the line discipline. */
  closeInput(): void {
    this.terminal.write("\x04");
  }

  pause(): void {
    this.terminal.pause();
  }

  resume(): void {
    this.terminal.resume();
  }

  resize(cols: number, rows: number): void {
    this.terminal.resize(cols, rows);
  }
}
