import type { TerminalSize } from "../terminal-size.ts";
import { PipeTransport } from "./pipe.ts";
import { type LoadedPty, spawnPty } from "./pty.ts";
import type { SpawnSpec, Transport, TransportEvents } from "./types.ts";

/** Starts a job's process once the job is ready to hear its events. */
export type TransportFactory = (events: TransportEvents) => Transport;

/** What to run and on what: a PTY of `terminal` size through the loaded module, else pipes. */
export interface TransportSpec extends SpawnSpec {
  terminal?: { size: TerminalSize; pty: LoadedPty };
}

/** The factory a job is given: the only place that picks pipes or a terminal. */
export function transportFactory(spec: TransportSpec): TransportFactory {
  const { terminal, ...spawn } = spec;
  if (!terminal) return (events) => new PipeTransport(spawn, events);
  return (events) => spawnPty({ ...spawn, cols: terminal.size.cols, rows: terminal.size.rows }, events, terminal.pty);
}
