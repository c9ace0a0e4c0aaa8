/**
 * The test side of the faux model: a loopback HTTP server that answers each model request of a Pi
 * host by running the current {@link Script} on the transcript so far. A script decides every step
 * from what earlier steps returned (a poll can use the session_id an exec_command returned) and one
 * step may issue several tool calls at once.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { textOf } from "./events.ts";

export interface ToolCallRequest {
  name: string;
  arguments: Record<string, unknown>;
}

/** One model reply: tool calls (run in parallel by Pi), or final text that ends the run. */
export type ModelStep = { toolCalls: ToolCallRequest[] } | { text: string };

/** A tool result as the model sees it in the transcript. */
export interface SeenResult {
  toolName: string;
  text: string;
  /** Whatever the tool stored; typed loosely so tests can read fields directly. */
  details: any;
  isError: boolean;
}

/** What a script sees: the prompt and the tool results since it, in order. */
export interface ModelView {
  prompt: string;
  /** The turn answers a completion wake (a custom message this extension sent), not a user prompt. */
  wake: boolean;
  /** Model replies already given since the prompt: 0 for the first reply. */
  turn: number;
  /** Every tool result since the prompt. */
  results: SeenResult[];
  /** The results of the previous step's tool calls. */
  last: SeenResult[];
  /** The raw transcript. */
  messages: unknown[];
}

export type Script = (view: ModelView) => ModelStep;

/** The session_id the first tool result of this prompt returned (the usual "the job I just started"). */
export function firstSession(view: ModelView): number {
  return view.results[0]!.details.session_id as number;
}

/** Calls one tool. */
export function call(name: string, args: Record<string, unknown>): ModelStep {
  return { toolCalls: [{ name, arguments: args }] };
}

/** Calls several tools in one step. */
export function callAll(...calls: [name: string, args: Record<string, unknown>][]): ModelStep {
  return { toolCalls: calls.map(([name, args]) => ({ name, arguments: args })) };
}

/** Ends the run with text. */
export function say(text: string): ModelStep {
  return { text };
}

/** A script of fixed steps, taken in order by turn; each may depend on the view. Ends with "done". */
export function steps(...list: (ModelStep | ((view: ModelView) => ModelStep))[]): Script {
  return (view) => {
    const next = list[view.turn];
    if (next === undefined) return say("done");
    return typeof next === "function" ? next(view) : next;
  };
}

/** How this extension's wake prompts begin (Pi hands custom messages to the model as user messages). */
const WAKE_PREFIX = "[unified-exec]";

interface TranscriptMessage {
  role: string;
  content?: unknown;
  toolName?: string;
  details?: unknown;
  isError?: boolean;
}

/** Builds the script's view from Pi's transcript: everything after the latest user message. */
export function viewOf(messages: TranscriptMessage[]): ModelView {
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") {
      start = i;
      break;
    }
  }
  const since = messages.slice(start + 1);
  const results: SeenResult[] = [];
  let last: SeenResult[] = [];
  let turn = 0;
  for (const message of since) {
    if (message.role === "assistant") {
      turn++;
      last = [];
    } else if (message.role === "toolResult") {
      const seen = {
        toolName: message.toolName ?? "",
        text: textOf(message.content),
        details: message.details,
        isError: message.isError === true,
      };
      results.push(seen);
      last.push(seen);
    }
  }
  const prompt = textOf(messages[start]?.content);
  return { prompt, wake: prompt.startsWith(WAKE_PREFIX), turn, results, last, messages };
}

export class ScriptedModel {
  /** The script that answers the next model requests. */
  script: Script = () => say("no script set");
  /** What the model answers to a completion wake (it may arrive in the middle of a test's run). */
  wakeScript: Script = () => say("noted the finished job");
  /** Errors thrown by scripts, so a test can fail with the cause rather than a confused transcript. */
  readonly errors: Error[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ScriptedModel> {
    let model: ScriptedModel | undefined;
    const server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => {
        body += chunk;
      });
      request.on("end", () => {
        let reply: object;
        try {
          const { messages } = JSON.parse(body) as { messages: TranscriptMessage[] };
          const view = viewOf(messages);
          reply = (view.wake ? model!.wakeScript : model!.script)(view);
        } catch (error) {
          model!.errors.push(error as Error);
          reply = { error: `script failed: ${(error as Error).stack ?? error}` };
        }
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    model = new ScriptedModel(server, `http://127.0.0.1:${port}/`);
    return model;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
