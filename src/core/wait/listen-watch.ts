/**
 * `until_listening`: a wait that ends when the job listens on an address it did not hold when the
 * call began (`true`) or on a given port, or, for an HTTP URL on this machine or a path on the job's
 * own port, when a GET there is answered below 500 (vite, next and Django bind before they compile).
 * The runtime's reader scans this job only, at most every {@link LISTEN_CHECK_MS}, never after the
 * end. An address ends the wait only when two checks in a row see it: vite, get-port and portfinder
 * listen on a port for an instant to probe it, close, then bind.
 */
import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { type Clock, realClock } from "../shared/clock.ts";
import { ExecRequestError } from "../shared/errors.ts";

/** How often a wait reads the job's sockets: a bind is seen within about this long, one scan of one job costs a few ms at most. */
export const LISTEN_CHECK_MS = 100;
const MAX_LISTEN_PORT = 65_535;

/** A GET that does not answer within this long is tried again at a later check. */
const HTTP_TRY_MS = 1_000;

/** What ends the wait: any address the job did not hold at the call's start, one port, or an HTTP answer (`port` absent: the job's own). */
export type ListenTarget = { kind: "new" } | { kind: "port"; port: number } | { kind: "http"; path: string; host?: string; port?: number };

/** One GET of `path` on `host:port`: its status, or undefined when nothing answered in time or `signal` ended it. */
export type HttpProbe = (host: string, port: number, path: string, timeoutMs: number, signal: AbortSignal) => Promise<number | undefined>;

const httpGet: HttpProbe = (host, port, path, timeoutMs, signal) =>
  new Promise((resolve) => {
    // A wall-clock limit on the whole try: a socket timeout alone lets a server that trickles bytes keep it open.
    const limit = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    const req = request({ host, port, path, method: "GET", agent: false, signal: limit }, (response) => {
      resolve(response.statusCode);
      response.destroy();
    });
    req.on("error", () => resolve(undefined));
    req.end();
  });

/** Hosts of this machine: loopback names and addresses, the unspecified ones, and every interface's address. */
function localHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost" || bare === "0.0.0.0" || bare === "::" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare)) return true;
  return Object.values(networkInterfaces()).some((addresses) => addresses?.some((address) => address.address === bare));
}

/** A URL string as `until_listening`'s HTTP target, or why it is not one. */
function httpTarget(value: string): ListenTarget | string {
  if (/^\d+$/.test(value)) return "a number for a port, not a string";
  if (/[\s\x00-\x1f\x7f]/.test(value) || value.length > 2_000) return "a URL without spaces or control characters";
  if (value.startsWith("/")) return { kind: "http", path: value };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "an http:// URL or a path starting with /";
  }
  if (url.protocol !== "http:") return `an http:// URL (not ${url.protocol.slice(0, 20)})`;
  if (url.username || url.password) return "a URL without credentials";
  if (!localHost(url.hostname)) return "a URL on this machine (localhost, 127.0.0.1, [::1] or one of its addresses)";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return { kind: "http", path: `${url.pathname}${url.search}`, host, port: Number(url.port || 80) };
}

/** Reads the job's listening addresses now (`127.0.0.1:8765`); undefined where they cannot be read. */
export type ListenReader = () => readonly string[] | undefined;

function shown(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : String(value);
}

/** The model's `until_listening`, checked before anything runs (a clear error ending in `untouched`); undefined for no condition. */
export function checkUntilListening(value: unknown, untouched: string): ListenTarget | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { kind: "new" };
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_LISTEN_PORT) return { kind: "port", port: value };
  const target = typeof value === "string" ? httpTarget(value) : undefined;
  if (typeof target === "object") return target;
  throw new ExecRequestError(
    `until_listening must be true (a new listening address of the job), an http:// URL on this machine or a path such as /health ` +
      `on the job's port (the wait ends when it answers), or a TCP port from 1 to ${MAX_LISTEN_PORT}, got ${shown(value)}` +
      `${target ? ` (it must be ${target})` : ""}. ${untouched}`,
  );
}

/** The port of an address such as `127.0.0.1:8765` or `[::]:5173`. */
function portOf(address: string): number {
  return Number(address.slice(address.lastIndexOf(":") + 1));
}

export class ListenWatch {
  private baseline: ReadonlySet<string> = new Set();
  private timer: unknown;
  private met: string | undefined;
  /** The addresses the previous check found: the next one ends the wait on one it still finds. */
  private seen: ReadonlySet<string> = new Set();
  private addresses: readonly string[] | undefined;
  private stopped = false;
  /** A GET in flight (no check starts another), ended by {@link stop}. */
  private asking: AbortController | undefined;
  /** GETs tried so far: a path tries the job's ports in turn, the lowest first. */
  private tries = 0;
  /** The status of the answer that ended an HTTP wait. */
  status: number | undefined;

  constructor(
    private readonly target: ListenTarget,
    private readonly read: ListenReader,
    private readonly onMet: (address: string) => void,
    private readonly clock: Clock = realClock,
    private readonly intervalMs: number = LISTEN_CHECK_MS,
    private readonly probe: HttpProbe = httpGet,
  ) {}

  /** The address that ended the wait, once one did. */
  get address(): string | undefined {
    return this.met;
  }

  /** Every address the check that ended the wait read (the result shows that read, never `listening` beside none). */
  get listening(): readonly string[] | undefined {
    return this.addresses;
  }

  /** Takes the baseline (what the job listens on as the call begins) and starts checking. */
  start(): void {
    const now = this.read() ?? [];
    if (this.target.kind === "new") this.baseline = new Set(now);
    else this.check(now);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.asking?.abort();
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next check comes an interval after this one ended: a slow scan never piles up. */
  private schedule(): void {
    if (this.stopped || this.met !== undefined) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      if (!this.check(this.read() ?? [])) this.schedule();
    }, this.intervalMs);
  }

  private check(addresses: readonly string[]): boolean {
    const target = this.target;
    if (target.kind === "http") return this.ask(target, addresses);
    const found = addresses.filter((address) => (target.kind === "port" ? portOf(address) === target.port : !this.baseline.has(address)));
    const still = found.find((address) => this.seen.has(address));
    this.seen = new Set(found);
    if (still === undefined) return false;
    this.end(still, addresses);
    return true;
  }

  private end(address: string, addresses: readonly string[]): void {
    this.met = address;
    this.addresses = addresses;
    this.stop();
    this.onMet(address);
  }

  /**
   * An HTTP wait: once the job listens on the URL's port (a path: on its ports in turn, the lowest
   * first, so a database beside the app is not the only one asked), a GET there; an answer below 500
   * ends the wait. A job that does not listen there yet, or no answer within a try, waits for a later
   * check. The checks go on while a GET is in flight.
   */
  private ask(target: Extract<ListenTarget, { kind: "http" }>, addresses: readonly string[]): boolean {
    const candidates = addresses.filter((candidate) => target.port === undefined || portOf(candidate) === target.port);
    if (candidates.length === 0 || this.asking) return false;
    const address = candidates[this.tries++ % candidates.length]!;
    const bound = address.slice(0, address.lastIndexOf(":")).replace(/^\[|\]$/g, "");
    const host = target.host ?? (bound === "0.0.0.0" ? "127.0.0.1" : bound === "::" ? "::1" : bound);
    const asking = new AbortController();
    this.asking = asking;
    void this.probe(host, portOf(address), target.path, HTTP_TRY_MS, asking.signal).then((status) => {
      this.asking = undefined;
      if (this.stopped || this.met !== undefined || status === undefined || status >= 500) return;
      this.status = status;
      this.end(address, addresses);
    });
    return false;
  }
}
