/**
 * A long-lived real Pi CLI in `--mode rpc`, so many scenarios share one host start (about a second
 * each). A test sends prompts with a script for the model, extension commands, `new_session` and any
 * other RPC command, and answers `extension_ui_request` dialogs.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before } from "node:test";
import { type PiEvent, type Run, runOf } from "./events.ts";
import { EXTENSION_ENTRY, type PiHost, REPO_ROOT } from "./hosts.ts";
import { killTree } from "./launched.ts";
import { type LaunchedPi, type LaunchOptions, launchPi, type PiDirs } from "./pi-process.ts";
import { waitFor } from "./processes.ts";
import { type Script, say } from "./scripted-model.ts";

/** The test-only extension with the commands tests drive Pi with (`/test-reload`, `/test-pending-wakes`, …). */
export const PROBE_EXTENSION = join(REPO_ROOT, "tests", "fixtures", "probe-extension.ts");

/** Our extension and the probe, with a 1 s cooldown between a job's pattern wakes, so a test sees several in seconds. */
export const FAST_PATTERN_WAKES: LaunchOptions = {
  extensions: [EXTENSION_ENTRY, PROBE_EXTENSION],
  env: { PI_UNIFIED_EXEC_PATTERN_WAKE_COOLDOWN_S: "1" },
};

/** Answers one dialog: its response fields, later (a promise: the dialog stays open until then), or none (cancelled). */
type UiHandler = (request: PiEvent) => Record<string, unknown> | Promise<Record<string, unknown> | undefined> | undefined;

export class PiRpcHost {
  private nextId = 1;
  private readonly responses = new Map<string, (response: PiEvent) => void>();
  private uiHandler: UiHandler | undefined;

  private constructor(
    readonly host: PiHost,
    private readonly pi: LaunchedPi,
  ) {
    pi.onRecord.add((record) => {
      if (record.type === "response" && typeof record.id === "string") {
        this.responses.get(record.id)?.(record);
        this.responses.delete(record.id);
      }
      if (record.type === "extension_ui_request") this.answerUi(record);
    });
  }

  /**
   * Starts Pi and waits until it answers `get_state` (within `readyMs`). A Pi that does not is
   * stopped with everything it started, its model and its dirs, and the start fails saying why: a
   * caller's `after` has nothing to close.
   */
  static async start(host: PiHost, options: LaunchOptions & { readyMs?: number } = {}): Promise<PiRpcHost> {
    const readyMs = options.readyMs ?? 30_000;
    const rpc = new PiRpcHost(host, await launchPi(host, "rpc", options));
    const ready = await Promise.race([rpc.request({ type: "get_state" }, readyMs).catch(() => undefined), rpc.pi.exited]);
    if (ready === undefined) return rpc.pi.fail(`${host.name} did not answer get_state within ${readyMs} ms; stopped it`);
    if (!("type" in ready)) return rpc.pi.fail(`${host.name} exited (${ready.code ?? ready.signal}) before it was ready`);
    if (!ready.success) return rpc.pi.fail(`${host.name} is not ready: ${JSON.stringify(ready)}`);
    return rpc;
  }

  get dirs(): PiDirs {
    return this.pi.dirs;
  }

  get pid(): number {
    return this.pi.child.pid!;
  }

  /** Every record so far. */
  get records(): readonly PiEvent[] {
    return this.pi.records;
  }

  stderr(): string {
    return this.pi.stderr();
  }

  /** Sends one RPC command and resolves with its response. */
  request(command: Record<string, unknown>, timeoutMs = 30_000): Promise<PiEvent> {
    const id = `t${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.responses.delete(id);
        reject(new Error(`no response to ${JSON.stringify(command)} within ${timeoutMs} ms\nstderr:\n${this.stderr()}`));
      }, timeoutMs);
      this.responses.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      this.pi.child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  }

  /** How long the model waits before each answer: Pi sits idle in between, as it does while a real model thinks. */
  set modelDelayMs(ms: number) {
    this.pi.model.delayMs = ms;
  }

  /** The script for the turns a completion wake starts (default: a short acknowledgement). */
  setWakeScript(script: Script): void {
    this.pi.model.wakeScript = script;
  }

  /** Answers extension dialogs: return the response fields (`value`, `confirmed`, `cancelled`). */
  onUiRequest(handler: UiHandler | undefined): void {
    this.uiHandler = handler;
  }

  /**
   * Sends `prompt` with `script` as the model and resolves once Pi settles, with the tool calls and
   * events of this run. A prompt an extension command handled resolves at its response.
   */
  async run(prompt: string, script: Script, timeoutMs = 60_000): Promise<Run> {
    const from = this.pi.records.length;
    this.pi.model.script = script;
    const response = await this.request({ type: "prompt", message: prompt }, timeoutMs);
    if (!response.success) throw new Error(`prompt refused: ${JSON.stringify(response)}`);
    if (response.data?.disposition !== "handled") {
      await this.waitForRecord((record) => record.type === "agent_settled", from, timeoutMs, `agent_settled after "${prompt}"`);
    }
    if (this.pi.model.errors.length > 0) throw this.pi.model.errors.shift();
    return runOf(this.pi.records.slice(from));
  }

  /**
   * Waits until every run Pi started has settled: a wake's turn may be running, and a prompt sent
   * meanwhile would be refused.
   */
  async waitIdle(timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const state = await this.request({ type: "get_state" });
      const data = state.data as { isStreaming?: boolean; isCompacting?: boolean; pendingMessageCount?: number } | undefined;
      if (!data?.isStreaming && !data?.isCompacting && !data?.pendingMessageCount) return;
      if (performance.now() > deadline)
        throw new Error(`Pi did not settle within ${timeoutMs} ms: ${JSON.stringify(data)}\nstderr:\n${this.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Settles Pi and reads that nothing more can come of what happened so far: every run Pi started
   * has ended and the session's runtime holds no wake decided and unsent (what would otherwise send
   * one later). Checked twice, with no run started in between. Needs {@link PROBE_EXTENSION}. A test
   * that shows "nothing more happens" settles and then counts, never waits a fixed span.
   */
  async settle(timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      await this.waitIdle(Math.max(1_000, deadline - performance.now()));
      const from = this.pi.records.length;
      const pending = await this.pendingWakes();
      await this.waitIdle(Math.max(1_000, deadline - performance.now()));
      const started = this.pi.records.slice(from).some((record) => record.type === "agent_start");
      if (pending === 0 && !started) return;
      if (performance.now() > deadline) throw new Error(`Pi did not settle within ${timeoutMs} ms: ${pending} wakes pending`);
    }
  }

  /** How many wakes the session's runtime has decided on and not sent (held for a run, in its batch window, or to retry). */
  async pendingWakes(): Promise<number> {
    const file = join(this.dirs.root, `pending-wakes-${this.nextId}`);
    await this.run(`/test-pending-wakes ${file}`, () => say("not a model turn"));
    await waitFor(() => existsSync(file), "the pending-wake count");
    return Number(readFileSync(file, "utf8"));
  }

  /** Resolves with the first record at index ≥ `from` that matches. */
  waitForRecord(match: (record: PiEvent) => boolean, from = 0, timeoutMs = 30_000, what = "a record"): Promise<PiEvent> {
    const found = this.pi.records.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const listener = (record: PiEvent) => {
        if (!match(record)) return;
        cleanup();
        resolve(record);
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`pi exited while waiting for ${what}\nstderr:\n${this.stderr()}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\nstderr:\n${this.stderr()}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.pi.onRecord.delete(listener);
        this.pi.child.off("close", onExit);
      };
      this.pi.onRecord.add(listener);
      this.pi.child.once("close", onExit);
    });
  }

  /**
   * Quits Pi the way an RPC client does (closing its stdin) and waits for it to exit; SIGKILL (Pi
   * and what it started) after `timeoutMs`. Removes the temp dir.
   */
  async close(timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    this.pi.child.stdin.end();
    const timer = setTimeout(() => killTree(this.pid), timeoutMs);
    try {
      const exit = await this.pi.exited;
      return { ...exit, stderr: this.stderr() };
    } finally {
      clearTimeout(timer);
      await this.pi.cleanup();
    }
  }

  private answerUi(request: PiEvent): void {
    if (!["select", "confirm", "input", "editor"].includes(request.method)) {
      this.uiHandler?.(request);
      return;
    }
    // Dialogs without an answer are cancelled, so an unexpected one never blocks a test.
    const respond = (fields: Record<string, unknown> | undefined) =>
      this.pi.child.stdin.write(
        `${JSON.stringify({ type: "extension_ui_response", id: request.id, ...(fields ?? { cancelled: true }) })}\n`,
      );
    const answer = this.uiHandler?.(request);
    if (answer instanceof Promise) void answer.then(respond, () => respond(undefined));
    else respond(answer);
  }
}

/**
 * One Pi for the enclosing `describe`: started in its `before` (handed to `use`), quit in its `after`
 * with no dialog handler left, so a handler a test set cannot answer what quitting asks.
 */
export function piForSuite(host: PiHost, options: LaunchOptions, use: (pi: PiRpcHost) => void): void {
  let pi: PiRpcHost | undefined;
  before(async () => {
    pi = await PiRpcHost.start(host, options);
    use(pi);
  });
  after(async () => {
    pi?.onUiRequest(undefined);
    await pi?.close();
  });
}
