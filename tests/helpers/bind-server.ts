/**
 * Servers that bind when a test says: a port free right now, a Python command that listens on each
 * of some ports in turn, writing when each bind happened, so a test can time `until_listening`
 * against the bind itself (the runtime's tests and the real-Pi ones use the same server), and a Node
 * server that probes its port before it listens.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { prepareExec } from "../../src/core/request/request.ts";
import type { ExecRuntime } from "../../src/core/runtime.ts";
import { runningId } from "./reports.ts";

/** A port free right now (bound and closed by this process). */
export async function freePort(): Promise<number> {
  for (;;) {
    // Below the kernel's ephemeral range (32768 up): a port taken from that range can be handed to
    // another test's bind(0) or outgoing connection before this test binds it.
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
}

export interface BindServerOptions {
  /** The ports to listen on, in turn (0: any). */
  ports: number[];
  /** Seconds before the first bind (default 1). */
  delay?: number;
  /** Seconds between binds (default 1). */
  gap?: number;
  /** A file each bind appends `port epoch-ms` to, right after its `listen`. */
  stamp?: string;
  /** Seconds between each socket's bind and its listen (uvicorn `--reload` binds long before its worker listens). */
  listenAfter?: number;
}

/** The shell command of a Python server that binds as `options` say, then sleeps 300 s holding every socket. */
export function bindServer({ ports, delay = 1, gap = 1, stamp, listenAfter = 0 }: BindServerOptions): string {
  const script = [
    "import socket,time",
    "held=[]",
    `time.sleep(${delay})`,
    `for i,p in enumerate(${JSON.stringify(ports)}):`,
    `    i and time.sleep(${gap})`,
    `    s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(('127.0.0.1',p)); time.sleep(${listenAfter}); s.listen(); held.append(s)`,
    ...(stamp ? [`    open('${stamp}','a').write('%d %d\\n' % (s.getsockname()[1], time.time()*1000))`] : []),
    "time.sleep(300)",
  ].join("\n");
  return `python3 -c "${script.replace(/"/g, '\\"')}"`;
}

/**
 * The shell command of a Node server that probes `port` as vite and get-port do — listens on it for
 * 50 ms and closes, six times 400 ms apart — then listens on it for real and writes the epoch ms of
 * that listen to `stamp`.
 */
export function probingServer(port: number, stamp: string): string {
  const script = [
    "const net = require('node:net'), fs = require('node:fs');",
    `const listen = (then) => { const s = net.createServer(); s.listen(${port}, '127.0.0.1', () => then(s)); };`,
    "let probes = 0;",
    "const probe = () => listen((s) => setTimeout(() => s.close(() => (++probes < 6 ? setTimeout(probe, 400) : setTimeout(serve, 500))), 50));",
    `const serve = () => listen(() => fs.writeFileSync('${stamp}', String(Date.now())));`,
    "probe();",
  ].join(" ");
  return `node -e "${script}"`;
}

/** The binds a server wrote to `stamp`: `[port, epoch ms]` each, in order. */
export function binds(stamp: string): [number, number][] {
  if (!existsSync(stamp)) return [];
  return readFileSync(stamp, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(" ").map(Number) as [number, number]);
}

/**
 * Runs `until_listening: true` on a server binding after 1 s (its bind stamped in `stamp`); returns
 * how long after the bind the call returned.
 */
export async function bindLag(runtime: ExecRuntime, stamp: string): Promise<number> {
  const report = await runtime.exec(
    prepareExec({ cmd: bindServer({ ports: [0], stamp }), yield_time_ms: 20_000, until_listening: true }, process.cwd(), process.env),
  );
  const returned = Date.now();
  const [[port, bound]] = binds(stamp) as [[number, number]];
  assert.equal(report.waitEnd, "listening");
  assert.equal(report.conditional, true);
  assert.deepEqual(report.job.listening, [`127.0.0.1:${port}`]);
  assert.equal(report.listeningChanged, true, "the result names the address");
  await runtime.kill(runningId(report)!, "SIGKILL");
  return returned - bound;
}
