/**
 * PTY echo with real terminals, for `tests/unit/core/call-wait.test.ts` and its runs beside CPU
 * burners in `tests/stress/waits.test.ts`: a command on a PTY whose chunks feed a call's wait once the
 * test sets it (`read`: what the call's read returns once a line matched), and one typed line's match.
 */
import { renderTerminalText, TerminalText } from "../../src/core/output/terminal-text.ts";
import { compileUntilPattern } from "../../src/core/patterns/line-pattern.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import { CallWait } from "../../src/core/wait/call-wait.ts";
import type { StartedJobs } from "./jobs.ts";
import { waitFor } from "./processes.ts";

/** An interactive bash whose prompt is `$ `, without the user's rc files. */
export const INTERACTIVE_BASH = `exec bash --noprofile --rcfile <(echo "PS1='$ '") -i`;

/** Runs `command` on a PTY; once `watch` is set it is fed each chunk as it arrives, and `read` is what the call's read returns once it matched. */
export function ptyTerminal(started: StartedJobs, command: string) {
  const state = {
    watch: undefined as CallWait | undefined,
    text: "",
    fed: "",
    bytes: [] as Buffer[],
    read: undefined as string | undefined,
  };
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
        if (state.watch && state.read === undefined) {
          state.fed += text;
          const cut = state.watch.feed(chunk, performance.now());
          state.bytes.push(Buffer.from(chunk.subarray(0, cut ?? chunk.length)));
          if (cut !== undefined) state.read = renderTerminalText(Buffer.concat(state.bytes).toString("utf8"));
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
  const watch = new CallWait({ pattern: compileUntilPattern(pattern) }, { partialLine: ready });
  watch.wrote(written);
  state.watch = watch;
  await transport.write(Buffer.from(written));
  await waitFor(() => state.read !== undefined, `a match of ${pattern} in ${JSON.stringify(state.fed)}`);
  transport.signal("SIGKILL");
  return { match: { line: watch.matchedLine(), read: state.read }, fed: state.fed };
}
