/**
 * The demo's stand-in for a model: a Pi extension that registers pi-ai's offline faux provider
 * (`faux`/`faux-1`) and answers every request from the transcript, so the tour needs no API key and
 * sends nothing anywhere. The latest prompt picks a scene (1: a dev server, 2: a Python REPL on a
 * terminal, 3: a job that wakes the agent when it exits, 4: a dev server left running with a wake on
 * its errors, 5: a passphrase the person types into a job); the tool results since that prompt decide
 * the scene's next call. A wake, which pi-unified-exec sends as a message of its own, is answered by
 * reading what the job printed. In the TUI it also shows the prompts above the editor. Scenes are scripts in the step language of examples/lib/model-script.ts (the
 * one the examples and the tests use). Loaded by `npm run demo` (examples/demo/run.ts), never by the
 * package itself.
 */
import { spawnSync } from "node:child_process";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { call, type ModelStep, type ModelView, say, scriptedFaux, sessionOf, viewOf } from "../lib/model-script.ts";

export const TOUR_PROMPTS = [
  "1 · start a dev server, check that it answers, read its log, stop it",
  "2 · open a Python REPL on a terminal and ask it for 6*7",
  "3 · run a job in the background and wake me when it is done",
  "4 · start a dev server, leave it running, and wake me if it logs an error",
  "5 · run a job that asks me for a passphrase",
] as const;

const NEXT = "Next: type 1 to 5 (listed above the editor); Ctrl+O shows the text I read for each call.";

/** The passphrase scene 5's job accepts. */
export const DEMO_PASSPHRASE = "open sesame";

/** The port `python3 -m http.server 0` chose, from its first line. */
function portOf(text: string): string | undefined {
  return /port (\d+)/.exec(text)?.[1];
}

/** The text after a result's `---` line: what the job printed. */
function outputOf(text: string): string {
  const at = text.indexOf("\n---\n");
  return at === -1 ? "" : text.slice(at + 5);
}

function devServer(view: ModelView): ModelStep {
  const [server, check, poll] = view.results;
  const port = server && portOf(server.text);
  if (!server) {
    return call("exec_command", {
      cmd: "python3 -u -m http.server 0 --bind 127.0.0.1",
      until_pattern: "^Serving HTTP",
      yield_time_ms: 20_000,
    });
  }
  if (sessionOf(server) === undefined || !port) return say(`The server did not start as expected; its result was:\n\n${server.text}`);
  const url = `http://127.0.0.1:${port}/`;
  if (!check) return call("exec_command", { cmd: `python3 -c "import urllib.request as u; print('status', u.urlopen('${url}').status)"` });
  if (!poll) return call("write_stdin", { session_id: sessionOf(server), yield_time_ms: 5_000 });
  if (view.results.length === 3) return call("kill_session", { session_id: sessionOf(server) });
  const status = /status (\d+)/.exec(check.text)?.[1] ?? "no status";
  return say(
    `The server came up on ${url} and kept running after my first call returned (session ${sessionOf(server)}). The check answered ${status}, the poll showed the request in the server's log, and kill_session stopped it. ${NEXT}`,
  );
}

function pythonRepl(view: ModelView): ModelStep {
  const [repl, answer, exit] = view.results;
  if (!repl) return call("exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 1_500 });
  if (sessionOf(repl) === undefined) return say(`Python did not stay running; its result was:\n\n${repl.text}`);
  if (!answer) return call("write_stdin", { session_id: sessionOf(repl), chars: "print(6*7)\\r", yield_time_ms: 1_500 });
  if (!exit) return call("write_stdin", { session_id: sessionOf(repl), chars: "\\x04", yield_time_ms: 5_000 });
  const said = /^(\d+)$/m.exec(outputOf(answer.text))?.[1] ?? "nothing I recognised";
  return say(`Python ran on a pseudo-terminal, answered ${said}, and Ctrl-D (\\x04) ended it. ${NEXT}`);
}

function wakeWhenDone(view: ModelView): ModelStep {
  if (view.results.length === 0) {
    return call("exec_command", { cmd: "echo building; sleep 3; echo build finished", yield_time_ms: 500, on_exit: "wake" });
  }
  return say(
    "The job is running in the background with its wake armed, and this turn ends now: nobody polls it. When it exits (in about 3 seconds) pi-unified-exec starts a turn by itself — watch for it below.",
  );
}

/** Scene 4: a dev server started until it is ready, left running, with a wake on the errors it logs. */
function serverLeftRunning(view: ModelView): ModelStep {
  const [server, armed] = view.results;
  if (!server) return call("exec_command", { cmd: "node server.mjs", until_pattern: "^ready on", yield_time_ms: 20_000 });
  const id = sessionOf(server);
  if (id === undefined) return say(`The server did not start as expected; its result was:\n\n${server.text}`);
  if (!armed) return call("set_on_exit", { session_id: id, wake_on_pattern: "(?i)error" });
  const where = /127\.0\.0\.1:\d+/.exec(server.text)?.[0] ?? "its port";
  return say(
    `The dev server (session ${id}) returned as soon as it printed its ready line and listens on ${where}. It keeps running, and I will be woken if it logs an error. ` +
      `Open http://${where}/fail in a browser (or curl it) to make it log one and wake me; /unified-exec-sessions lists it. ${NEXT}`,
  );
}

/** Scene 5: a job on a terminal asks for a passphrase; the person types it, the model sees only a count. */
function passphrase(view: ModelView): ModelStep {
  const [job, asked] = view.results;
  const check = `read -rs -p 'Passphrase: ' p; echo; if [ "$p" = '${DEMO_PASSPHRASE}' ]; then echo accepted; else echo rejected; fi`;
  if (!job) return call("exec_command", { cmd: check, tty: true, until_pattern: "Passphrase: $", yield_time_ms: 10_000 });
  const id = sessionOf(job);
  if (id === undefined) return say(`The job ended before asking; its result was:\n\n${job.text}`);
  if (!asked) {
    return call("write_stdin", {
      session_id: id,
      ask_user: `Type the passphrase (for this demo: ${DEMO_PASSPHRASE}), then Enter`,
      until_pattern: "^(accepted|rejected)",
      // The person types with no time limit; this window starts once they are done (30 s is the tool's most).
      yield_time_ms: 30_000,
    });
  }
  if (asked.isError) return say(`I could not hand you the keyboard: ${asked.text}`);
  const typed = /^user_input: (.+)$/m.exec(asked.text)?.[1] ?? "nothing";
  const verdict = /^(accepted|rejected)\s*$/m.exec(asked.text)?.[1] ?? "no verdict yet";
  return say(`You typed into session ${id} (${typed}); the job said "${verdict}". Your keys never reached me, only their count. ${NEXT}`);
}

/** A turn a wake started: read what the job printed, then sum it up. */
function answerWake(view: ModelView): ModelStep {
  const session = /session (\d+)/.exec(view.prompt)?.[1];
  const [read] = view.results;
  if (!session) return say("A job finished.");
  const line = /^\s*line: (.*)$/m.exec(view.prompt)?.[1];
  // A job the person typed into is never quoted by a wake: the line is read with a poll instead.
  const withheld = line?.startsWith("not quoted");
  if (line !== undefined && !withheld)
    return say(`Woken by session ${session}'s wake_on_pattern, without anyone polling: it logged "${line}". ${NEXT}`);
  if (!read) return call("write_stdin", { session_id: Number(session), yield_time_ms: 5_000 });
  if (withheld) {
    const logged =
      outputOf(read.text)
        .split("\n")
        .find((printed) => /error/i.test(printed)) ?? "";
    return say(
      `Woken by session ${session}'s wake_on_pattern; you typed into it, so the wake did not quote the line and I read it: "${logged}". ${NEXT}`,
    );
  }
  const exit = /exit_code: (\S+)/.exec(read.text)?.[1] ?? "unknown";
  const last = outputOf(read.text).trim().split("\n").at(-1) ?? "";
  return say(`Woken by the exit of session ${session} (exit_code ${exit}), without anyone polling; its last line: "${last}". ${NEXT}`);
}

/** Picks the scene from the prompt: its number, or a word from it. */
export function tourStep(view: ModelView): ModelStep {
  if (view.wake) return answerWake(view);
  const prompt = view.prompt.trim().toLowerCase();
  if (/^1\b|check/.test(prompt)) return devServer(view);
  if (/^2\b|repl|python/.test(prompt)) return pythonRepl(view);
  if (/^3\b|background/.test(prompt)) return wakeWhenDone(view);
  if (/^4\b|running/.test(prompt)) return serverLeftRunning(view);
  if (/^5\b|passphrase/.test(prompt)) return passphrase(view);
  return say(`This demo's model is a script: it knows five prompts.\n\n${TOUR_PROMPTS.join("\n")}`);
}

export default function tourModel(pi: ExtensionAPI): void {
  // One large token per block: the demo's replies appear at once rather than typed out.
  const faux = scriptedFaux((messages) => tourStep(viewOf(messages)), { tokenSize: 100_000 });
  pi.registerProvider(faux.provider);

  pi.on("session_start", (_event, ctx) => {
    if (!ctx.hasUI) return;
    const python = spawnSync("python3", ["--version"], { stdio: "ignore" }).status === 0;
    ctx.ui.setWidget("unified-exec-demo", [
      "pi-unified-exec demo · offline, scripted model, no API key · type 1 to 5 and Enter:",
      ...TOUR_PROMPTS.map((prompt) => `  ${prompt}`),
      ...(python ? [] : ["  python3 is not on PATH: 1 and 2 need it"]),
      "  Ctrl+O expands each call to the exact text the model read · /unified-exec-sessions lists the jobs",
      "  Ctrl+D on an empty line ends the demo and removes its temporary files.",
    ]);
  });
}
