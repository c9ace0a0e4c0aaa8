/**
 * The demo's stand-in for a model: a Pi extension that registers pi-ai's offline faux provider
 * (`faux`/`faux-1`) and answers every request from the transcript, so the tour needs no API key and
 * sends nothing anywhere. The latest prompt picks a scene (1: a dev server, 2: a Python REPL on a
 * terminal, 3: a job that wakes the agent when it exits); the tool results since that prompt decide
 * the scene's next call. A completion wake, which pi-unified-exec sends as a message of its own, is
 * answered by reading what the finished job printed. In the TUI it also shows the three prompts
 * above the editor. Loaded by `npm run demo` (examples/demo/run.ts), never by the package itself.
 */
import { spawnSync } from "node:child_process";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** What the tour does next: call one tool, or say something and end the turn. */
export type TourAction = { tool: string; args: Record<string, unknown> } | { say: string };

/** A tool result since the latest prompt, as the transcript carries it. */
interface Seen {
  tool: string;
  text: string;
  sessionId: number | undefined;
}

/** The part of the transcript a scene decides from. */
export interface TourView {
  prompt: string;
  results: Seen[];
}

export const TOUR_PROMPTS = [
  "1 · start a dev server, check that it answers, read its log, stop it",
  "2 · open a Python REPL on a terminal and ask it for 6*7",
  "3 · run a job in the background and wake me when it is done",
] as const;

const NEXT = "Next: type 1, 2 or 3 (listed above the editor).";

/** The port `python3 -m http.server 0` chose, from its first line. */
function portOf(text: string): string | undefined {
  return /port (\d+)/.exec(text)?.[1];
}

/** The text after a result's `---` line: what the job printed. */
function outputOf(text: string): string {
  const at = text.indexOf("\n---\n");
  return at === -1 ? "" : text.slice(at + 5);
}

function devServer(view: TourView): TourAction {
  const [server, check, poll] = view.results;
  const port = server && portOf(server.text);
  if (!server) return { tool: "exec_command", args: { cmd: "python3 -u -m http.server 0 --bind 127.0.0.1", yield_time_ms: 2_000 } };
  if (server.sessionId === undefined || !port) return { say: `The server did not start as expected; its result was:\n\n${server.text}` };
  const url = `http://127.0.0.1:${port}/`;
  if (!check)
    return { tool: "exec_command", args: { cmd: `python3 -c "import urllib.request as u; print('status', u.urlopen('${url}').status)"` } };
  if (!poll) return { tool: "write_stdin", args: { session_id: server.sessionId, yield_time_ms: 5_000 } };
  if (view.results.length === 3) return { tool: "kill_session", args: { session_id: server.sessionId } };
  const status = /status (\d+)/.exec(check.text)?.[1] ?? "no status";
  return {
    say: `The server came up on ${url} and kept running after my first call returned (session ${server.sessionId}). The check answered ${status}, the poll showed the request in the server's log, and kill_session stopped it. ${NEXT}`,
  };
}

function pythonRepl(view: TourView): TourAction {
  const [repl, answer, exit] = view.results;
  if (!repl) return { tool: "exec_command", args: { cmd: "python3 -q", tty: true, yield_time_ms: 1_500 } };
  if (repl.sessionId === undefined) return { say: `Python did not stay running; its result was:\n\n${repl.text}` };
  if (!answer) return { tool: "write_stdin", args: { session_id: repl.sessionId, chars: "print(6*7)\\r", yield_time_ms: 1_500 } };
  if (!exit) return { tool: "write_stdin", args: { session_id: repl.sessionId, chars: "\\x04", yield_time_ms: 5_000 } };
  const said = /^(\d+)$/m.exec(outputOf(answer.text))?.[1] ?? "nothing I recognised";
  return { say: `Python ran on a pseudo-terminal, answered ${said}, and Ctrl-D (\\x04) ended it. ${NEXT}` };
}

function wakeWhenDone(view: TourView): TourAction {
  if (view.results.length === 0) {
    return { tool: "exec_command", args: { cmd: "echo building; sleep 3; echo build finished", yield_time_ms: 500, on_exit: "wake" } };
  }
  return {
    say: "The job is running in the background with its wake armed, and this turn ends now: nobody polls it. When it exits (in about 3 seconds) pi-unified-exec starts a turn by itself — watch for it below.",
  };
}

/** A turn a completion wake started: read what the finished job printed, then sum it up. */
function answerWake(view: TourView): TourAction {
  const session = /session (\d+)/.exec(view.prompt)?.[1];
  const [read] = view.results;
  if (!session) return { say: "A job finished." };
  if (!read) return { tool: "write_stdin", args: { session_id: Number(session), yield_time_ms: 5_000 } };
  const exit = /exit_code: (\S+)/.exec(read.text)?.[1] ?? "unknown";
  const last = outputOf(read.text).trim().split("\n").at(-1) ?? "";
  return { say: `Woken by the exit of session ${session} (exit_code ${exit}), without anyone polling; its last line: "${last}". ${NEXT}` };
}

/** Picks the scene from the prompt: its number, or a word from it. */
export function tourStep(view: TourView): TourAction {
  const prompt = view.prompt.trim().toLowerCase();
  if (prompt.startsWith("[unified-exec]")) return answerWake(view);
  if (/^1\b|server/.test(prompt)) return devServer(view);
  if (/^2\b|repl|python/.test(prompt)) return pythonRepl(view);
  if (/^3\b|wake|background/.test(prompt)) return wakeWhenDone(view);
  return { say: `This demo's model is a script: it knows three prompts.\n\n${TOUR_PROMPTS.join("\n")}` };
}

interface TranscriptMessage {
  role?: string;
  content?: unknown;
  toolName?: string;
  details?: { session_id?: unknown } | null;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

/** The view a scene decides from: everything after the latest user message (a wake arrives as one). */
export function tourView(messages: readonly TranscriptMessage[]): TourView {
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") {
      start = i;
      break;
    }
  }
  const view: TourView = { prompt: textOf(messages[start]?.content), results: [] };
  for (const message of messages.slice(start + 1)) {
    if (message.role !== "toolResult") continue;
    const id = message.details?.session_id;
    view.results.push({ tool: message.toolName ?? "", text: textOf(message.content), sessionId: typeof id === "number" ? id : undefined });
  }
  return view;
}

export default function tourModel(pi: ExtensionAPI): void {
  // One large token per block: the demo's replies appear at once rather than typed out.
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }], tokenSize: { min: 100_000, max: 100_000 } });
  const step = (context: { messages: unknown[] }) => {
    // The step re-queues itself, so the script answers any number of turns.
    faux.appendResponses([step]);
    const action = tourStep(tourView(context.messages as TranscriptMessage[]));
    if ("say" in action) return fauxAssistantMessage(action.say);
    return fauxAssistantMessage(fauxToolCall(action.tool, action.args as Parameters<typeof fauxToolCall>[1]), { stopReason: "toolUse" });
  };
  faux.setResponses([step]);
  pi.registerProvider(faux.provider);

  pi.on("session_start", (_event, ctx) => {
    if (!ctx.hasUI) return;
    const python = spawnSync("python3", ["--version"], { stdio: "ignore" }).status === 0;
    ctx.ui.setWidget("unified-exec-demo", [
      "pi-unified-exec demo · offline, scripted model, no API key · type 1, 2 or 3 and Enter:",
      ...TOUR_PROMPTS.map((prompt) => `  ${prompt}`),
      ...(python ? [] : ["  python3 is not on PATH: 1 and 2 need it, 3 works without"]),
      "  Ctrl+D on an empty line ends the demo and removes its temporary files.",
    ]);
  });
}
