/**
 * Programs in a real terminal: tmux on a private server socket, so the user's own tmux is never
 * touched. A test types with `send-keys` and reads the screen with `capture-pane`.
 * - `TmuxTerminal`: any script in a pane (`npm start`, `npm run demo`);
 * - `TmuxPi`: a real interactive Pi (the TUI) with the faux model and this extension. Its tmux runs
 *   with `set-clipboard on`, so an OSC 52 clipboard write that reached the terminal would show up as a
 *   tmux paste buffer, and an OSC 0 title change as the pane's title.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXTENSION_ENTRY, type PiHost } from "./hosts.ts";
import { registerLaunched } from "./launched.ts";
import { FAUX_EXTENSION, isolatedPiEnvironment, makeDirs, type PiDirs } from "./pi-process.ts";
import { waitFor } from "./processes.ts";
import { ScriptedModel } from "./scripted-model.ts";

/** Quotes a value for `sh`. */
export const shellQuote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;

export interface PaneOptions {
  cols: number;
  rows: number;
  /** tmux options (`set -g …` lines); extended keys are always on. */
  settings?: string[];
  /** What `screen()` captures: the visible pane, or its scrollback too. */
  history?: boolean;
}

/** One session (`name`) on a private tmux server, running one script. */
export class TmuxTerminal {
  readonly socket = `piue-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private history = false;
  private unregister: () => void = () => {};

  constructor(readonly name: string) {}

  /** Starts `script` (an executable file) in a detached session; tmux's config is written into `dir`. */
  open(dir: string, script: string, options: PaneOptions): void {
    const config = join(dir, "tmux.conf");
    writeFileSync(config, ["set -g extended-keys on", ...(options.settings ?? []), ""].join("\n"));
    this.history = options.history ?? false;
    // tmux's server detaches from this process: a file that hits its ceiling kills it by its socket.
    this.unregister = registerLaunched(() => this.close());
    this.tmux("-f", config, "new-session", "-d", "-s", this.name, "-x", String(options.cols), "-y", String(options.rows), script);
  }

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  }

  /** Types text (literally) and, unless told otherwise, Enter. */
  type(text: string, enter = true): void {
    this.tmux("send-keys", "-t", this.name, "-l", text);
    if (enter) this.key("Enter");
  }

  key(name: string): void {
    this.tmux("send-keys", "-t", this.name, name);
  }

  /** The pane as text (with its scrollback when opened with `history`); "" once the pane is gone. */
  screen(): string {
    try {
      return this.tmux("capture-pane", "-p", ...(this.history ? ["-S", "-"] : []), "-t", this.name);
    } catch {
      return ""; // the pane is gone: its program exited
    }
  }

  running(): boolean {
    try {
      this.tmux("has-session", "-t", this.name);
      return true;
    } catch {
      return false;
    }
  }

  async waitForScreen(pattern: RegExp, what: string, timeoutMs = 30_000): Promise<string> {
    let last = "";
    try {
      const matches = () => {
        last = this.screen();
        return pattern.test(last);
      };
      await waitFor(matches, what, timeoutMs, 100);
    } catch (error) {
      throw new Error(`${(error as Error).message}\nscreen:\n${last}`);
    }
    return last;
  }

  close(): void {
    this.unregister();
    try {
      this.tmux("kill-server");
    } catch {
      // Already gone: nothing is left to stop.
    }
  }
}

export class TmuxPi extends TmuxTerminal {
  private constructor(
    readonly model: ScriptedModel,
    readonly dirs: PiDirs,
  ) {
    super("pi");
  }

  static async start(host: PiHost): Promise<TmuxPi> {
    const model = await ScriptedModel.start();
    const dirs = makeDirs();
    const env = isolatedPiEnvironment(dirs, model.url);
    const script = join(dirs.root, "pi.sh");
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        ...Object.entries(env).map(([key, value]) => `export ${key}=${shellQuote(value)}`),
        `cd ${shellQuote(dirs.cwd)}`,
        `exec ${shellQuote(process.execPath)} ${shellQuote(host.cliPath)} -ne --no-session -e ${shellQuote(FAUX_EXTENSION)} -e ${shellQuote(EXTENSION_ENTRY)} --provider faux --model faux-1`,
        "",
      ].join("\n"),
    );
    chmodSync(script, 0o755);
    const pi = new TmuxPi(model, dirs);
    try {
      pi.open(dirs.root, script, { cols: 160, rows: 48, settings: ["set -g set-clipboard on"] });
      await pi.waitForScreen(/faux-1/, "Pi's footer", 20_000);
    } catch (error) {
      // A Pi that never drew its footer is stopped with its tmux server, model and dirs.
      await pi.close();
      throw new Error(`${host.name} did not start in tmux; stopped it: ${(error as Error).message}`);
    }
    return pi;
  }

  paneTitle(): string {
    return this.pane("#{pane_title}");
  }

  /** tmux paste buffers: where an OSC 52 clipboard write that reached the terminal would land. */
  buffers(): string {
    return this.tmux("list-buffers");
  }

  /**
   * The pane's whole history and screen with attributes (`capture-pane -e`): what the terminal holds,
   * as tmux re-emits it. Drawn text comes back with SGR styling only; anything else (a hyperlink, a
   * control string) would mean a sequence reached the terminal.
   */
  screenWithAttributes(): string {
    return this.tmux("capture-pane", "-p", "-e", "-S", "-", "-t", this.name);
  }

  /** A tmux format of the pane, e.g. `#{alternate_on}` or `#{cursor_x},#{cursor_y}`. */
  pane(format: string): string {
    return this.tmux("display", "-p", "-t", this.name, format).trim();
  }

  override async close(): Promise<void> {
    super.close();
    await this.model.close();
    rmSync(this.dirs.root, { recursive: true, force: true });
  }
}
