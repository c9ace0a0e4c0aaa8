/**
 * PTY echo with real terminals, for `tests/unit/core/line-watch.test.ts` and its runs beside CPU
 * burners in `tests/stress/waits.test.ts`: a command on a PTY whose rendered output feeds a
 * `LineWatch` once the test sets it, and one typed line's match.
 */
import { LineWatch } from "../../src/core/conditions/line-watch.ts";
import { compileUntilPattern } from "../../src/core/conditions/until-pattern.ts";
import { TerminalText } from "../../src/core/output/terminal-text.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import type { StartedJobs } from "./jobs.ts";
import { waitFor } from "./processes.ts";

/** An interactive bash whose prompt is `$ `, without the user's rc files. */
export const INTERACTIVE_BASH = `exec bash --noprofile --rcfile <(echo "PS1='$ '") -i`;

/** Runs `command` on a PTY; the watch is fed rendered chunks as they arrive once `watch` is set. */
export function ptyTerminal(started: StartedJobs, command: string) {
  const state = { watch: undefined as LineWatch | undefined, text: "", fed: "" };
  const render = new TerminalText();
  const transport = spawnPty(
    {
      file: "/bin/bash",
      args: ["--norc", "--noprofile", "-c", command],
      cwd: "/tmp",
      env: { ...process.env, TERM: "xterm-256color", PS1: "$ " },
      cols: 100,
      rows: 30,
    },
    {
      data: (chunk) => {
        const text = render.write(chunk.toString("utf8"), false);
        state.text += text;
        if (state.watch) {
          state.fed += text;
          state.watch.feed(text);
        }
      },
      exit: () => {},
      closed: () => {},
    },
    loadPtyModule(),
  );
  started.transport(transport);
  return { state, transport };
}

export async function echoCase(started: StartedJobs, command: string, ready: string, written: string, pattern: string) {
  const { state, transport } = ptyTerminal(started, command);
  await waitFor(() => state.text.endsWith(ready), `the prompt ${JSON.stringify(ready)}`);
  const watch = new LineWatch(compileUntilPattern(pattern), { partialLine: ready });
  watch.ignoreEcho(written);
  state.watch = watch;
  await transport.write(Buffer.from(written));
  await waitFor(() => watch.match !== undefined, `a match of ${pattern} in ${JSON.stringify(state.fed)}`);
  transport.signal("SIGKILL");
  return { match: watch.match!, fed: state.fed };
}
