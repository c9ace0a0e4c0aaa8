/**
 * Real servers for the port tests: a Node `http` server that binds then compiles (blocks its loop)
 * before it answers, and can close its port and open it again on a line of stdin while it keeps
 * running; Python's `http.server`; a holder of a port outside Pi; and a job that grows its memory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { listenedPorts } from "../../src/core/processes/port-conflicts.ts";
import { waitFor } from "./processes.ts";

/**
 * `node -e` running an http server on `port`: prints `bound PORT`, compiles (a busy loop) for
 * `compileMs`, prints `ready`, then answers every GET with 200 (`/missing`: 404). Each line on stdin
 * closes its port (`closed`), the next opens it again (`bound`), the process running on.
 */
export function nodeServer(port: number, compileMs = 0): string {
  const script = [
    "const http = require('node:http');",
    "let server;",
    "const open = (then) => { server = http.createServer((q, r) => { r.writeHead(q.url === '/missing' ? 404 : 200); r.end('ok'); });",
    `  server.listen(${port}, '127.0.0.1', () => { console.log('bound ${port}'); then(); }); };`,
    `open(() => { const end = Date.now() + ${compileMs}; while (Date.now() < end) {} console.log('ready'); });`,
    "process.stdin.on('data', () => { if (server.listening) server.close(() => console.log('closed')); else open(() => {}); });",
  ].join(" ");
  return `node -e "${script}"`;
}

/** Python's `http.server` on `port`, on loopback. */
export function pythonServer(port: number): string {
  return `python3 -m http.server ${port} --bind 127.0.0.1`;
}

/** A process of the test (outside any Pi) listening on `port`; `stop()` ends it. */
export async function outsideHolder(port: number): Promise<{ child: ChildProcess; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["-e", `require('node:net').createServer().listen(${port}, '127.0.0.1'); setTimeout(() => {}, 300000)`],
    {
      stdio: "ignore",
    },
  );
  await waitFor(() => listenedPorts()?.has(port) === true, "the holder's listen", 10_000, 20);
  return { child, stop: () => child.kill("SIGKILL") };
}

/** Binds `port` on loopback and closes it again: true when the bind succeeded. */
export async function bindsNow(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (bound) await new Promise((resolve) => server.close(resolve));
  return bound;
}

/** A Python job that holds `mb` MB resident, prints `holding`, and sleeps. */
export function memoryHolder(mb: number): string {
  return `python3 -c "import time; b = b'x' * (${mb} * 1024 * 1024); print('holding', flush=True); time.sleep(300)"`;
}

/**
 * A Python job that grows by `stepMb` every `everyS` seconds; before the step that takes it past
 * `markMb` of data it writes the epoch ms to `stamp` (the cap may stop it within that step).
 */
export function memoryGrower(stepMb: number, everyS: number, markMb: number, stamp: string): string {
  const script = [
    "import time",
    "held = []",
    "while True:",
    `    if (len(held) + 1) * ${stepMb} > ${markMb}: open('${stamp}', 'a').write('%d\\n' % (time.time() * 1000))`,
    `    held.append(b'x' * (${stepMb} * 1024 * 1024))`,
    `    time.sleep(${everyS})`,
  ].join("\n");
  return `python3 -c "${script.replace(/"/g, '\\"')}"`;
}
