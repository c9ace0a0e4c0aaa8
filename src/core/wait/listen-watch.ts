/**
 * `until_listening`: a wait that ends when the job listens — on an address it did not listen on when
 * the call began (`true`), or on a given port. The job's sockets are read by a function the runtime
 * gives (one scan of this job only), at most every {@link LISTEN_CHECK_MS} while the wait runs, and
 * never again once it ends. An address ends the wait only when two checks in a row see it: vite,
 * get-port and portfinder listen on a port for an instant to probe it, close, then bind for real.
 *
 * Interface:
 * - `checkUntilListening(value, untouched)`: the model's value checked before anything runs — absent
 *   or `false` is no condition, `true` a new address, a whole number 1–65535 that port; anything else
 *   throws a clear error ending in `untouched` (what did not happen).
 * - `new ListenWatch(target, read, onMet, clock?)`, then `start()`: reads the sockets once for the
 *   baseline, then every check interval; `onMet(address)` once. `address` says which address ended
 *   it and `listening` what the check that ended it read (the result shows that read: a result never
 *   says `listening` beside `none`); `stop()` ends the checks.
 */
import { type Clock, realClock } from "../shared/clock.ts";
import { LISTEN_CHECK_MS, MAX_LISTEN_PORT } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";

/** What ends the wait: any address the job did not hold at the call's start, or one port. */
export type ListenTarget = { kind: "new" } | { kind: "port"; port: number };

/** Reads the job's listening addresses now (`127.0.0.1:8765`); undefined where they cannot be read. */
export type ListenReader = () => readonly string[] | undefined;

function shown(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : String(value);
}

/** The model's `until_listening`, checked before anything runs; undefined for no condition. */
export function checkUntilListening(value: unknown, untouched: string): ListenTarget | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { kind: "new" };
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_LISTEN_PORT) return { kind: "port", port: value };
  throw new ExecRequestError(
    `until_listening must be true (a new listening address of the job) or a TCP port from 1 to ${MAX_LISTEN_PORT}, got ${shown(value)}. ${untouched}`,
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

  constructor(
    private readonly target: ListenTarget,
    private readonly read: ListenReader,
    private readonly onMet: (address: string) => void,
    private readonly clock: Clock = realClock,
    private readonly intervalMs: number = LISTEN_CHECK_MS,
  ) {}

  /** The address that ended the wait, once one did. */
  get address(): string | undefined {
    return this.met;
  }

  /** Every address the check that ended the wait read. */
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
    const found = addresses.filter((address) => (target.kind === "port" ? portOf(address) === target.port : !this.baseline.has(address)));
    const still = found.find((address) => this.seen.has(address));
    this.seen = new Set(found);
    if (still === undefined) return false;
    this.met = still;
    this.addresses = addresses;
    this.stop();
    this.onMet(still);
    return true;
  }
}
