/**
 * A real interactive Pi (the TUI) inside tmux, on a private tmux server socket so the user's own tmux
 * is never touched. The test types with `send-keys` and reads the screen with `capture-pane`. tmux
 * runs with `set-clipboard on`, so an OSC 52 clipboard write that reached the terminal would show up
 * as a tmux paste buffer, and an OSC 0 title change as the pane's title.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXTENSION_ENTRY, type PiHost } from "./hosts.ts";
import { FAUX_EXTENSION, isolatedPiEnvironment, makeDirs, type PiDirs } from "./pi-process.ts";
import { waitFor } from "./processes.ts";
import { ScriptedModel } from "./scripted-model.ts";

export class TmuxPi {
  private constructor(
    private readonly socket: string,
    readonly model: ScriptedModel,
    readonly dirs: PiDirs,
  ) {}

  static async start(host: PiHost): Promise<TmuxPi> {
    const model = await ScriptedModel.start();
    const dirs = makeDirs();
    const env = isolatedPiEnvironment(dirs, model.url);
    const script = join(dirs.root, "pi.sh");
    const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        ...Object.entries(env).map(([key, value]) => `export ${key}=${quote(value)}`),
        `cd ${quote(dirs.cwd)}`,
        `exec ${quote(process.execPath)} ${quote(host.cliPath)} -ne --no-session -e ${quote(FAUX_EXTENSION)} -e ${quote(EXTENSION_ENTRY)} --provider faux --model faux-1`,
        "",
      ].join("\n"),
    );
    chmodSync(script, 0o755);
    const config = join(dirs.root, "tmux.conf");
    writeFileSync(config, "set -g set-clipboard on\nset -g extended-keys on\n");
    const socket = `piue-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const tmux = new TmuxPi(socket, model, dirs);
    tmux.run("-f", config, "new-session", "-d", "-s", "pi", "-x", "160", "-y", "48", script);
    await tmux.waitForScreen(/faux-1/, "Pi's footer");
    return tmux;
  }

  private run(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** Types text (literally) and, unless told otherwise, Enter. */
  type(text: string, enter = true): void {
    this.run("send-keys", "-t", "pi", "-l", text);
    if (enter) this.key("Enter");
  }

  key(name: string): void {
    this.run("send-keys", "-t", "pi", name);
  }

  screen(): string {
    return this.run("capture-pane", "-p", "-t", "pi");
  }

  paneTitle(): string {
    return this.run("display", "-p", "-t", "pi", "#{pane_title}").trim();
  }

  /** tmux paste buffers: where an OSC 52 clipboard write that reached the terminal would land. */
  buffers(): string {
    return this.run("list-buffers");
  }

  /**
   * The pane's whole history and screen with attributes (`capture-pane -e`): what the terminal holds,
   * as tmux re-emits it. Drawn text comes back with SGR styling only; anything else (a hyperlink, a
   * control string) would mean a sequence reached the terminal.
   */
  screenWithAttributes(): string {
    return this.run("capture-pane", "-p", "-e", "-S", "-", "-t", "pi");
  }

  /** A tmux format of the pane, e.g. `#{alternate_on}` or `#{cursor_x},#{cursor_y}`. */
  pane(format: string): string {
    return this.run("display", "-p", "-t", "pi", format).trim();
  }

  async waitForScreen(pattern: RegExp, what: string, timeoutMs = 20_000): Promise<string> {
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

  async close(): Promise<void> {
    try {
      this.run("kill-server");
    } catch {
      // Already gone: nothing is left to stop.
    }
    await this.model.close();
  }
}
