/**
 * One way to script the offline model, shared by the examples, the demo and the test harness. A
 * {@link Script} reads a {@link ModelView} of the transcript since the latest prompt (the tool
 * results so far, in order) and answers with one {@link ModelStep}: tool calls (Pi runs them in
 * parallel), or text that ends the turn. `steps(...)` takes fixed steps in order, each of which may
 * depend on the view (a poll uses the session_id an earlier call returned). {@link scriptedFaux} is
 * pi-ai's offline faux provider answering every request this way.
 */
import { type AssistantMessage, type FauxProviderHandle, fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

export interface ToolCallRequest {
  name: string;
  arguments: Record<string, unknown>;
}

/** One model reply: tool calls, final text that ends the run, or a failed request (the model's error). */
export type ModelStep = { toolCalls: ToolCallRequest[] } | { text: string } | { error: string };

/** A tool result as the model sees it in the transcript. */
export interface SeenResult {
  toolName: string;
  text: string;
  /** Whatever the tool stored; typed loosely so scripts can read fields directly. */
  details: any;
  isError: boolean;
}

/** What a script sees: the prompt and the tool results since it, in order. */
export interface ModelView {
  prompt: string;
  /** The turn answers a completion wake (a custom message pi-unified-exec sent), not a user prompt. */
  wake: boolean;
  /** Model replies already given since the prompt: 0 for the first reply. */
  turn: number;
  /** Every tool result since the prompt. */
  results: SeenResult[];
  /** The results of the previous step's tool calls. */
  last: SeenResult[];
  /** The messages that came with the prompt (a `next_turn` notice rides with the run's first message). */
  riders: string[];
  /** The raw transcript. */
  messages: unknown[];
}

export type Script = (view: ModelView) => ModelStep;

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

/** The session_id the first tool result of this prompt returned (the usual "the job I just started"). */
export function firstSession(view: ModelView): number {
  return view.results[0]!.details.session_id as number;
}

/** The session_id a result carries (a job still running), or undefined. */
export function sessionOf(result: SeenResult | undefined): number | undefined {
  const id = result?.details?.session_id;
  return typeof id === "number" ? id : undefined;
}

/** How pi-unified-exec's wake prompts begin (Pi hands custom messages to the model as user messages). */
export const WAKE_PREFIX = "[unified-exec]";

/** The text of a message's content (a string, or text blocks). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

interface TranscriptMessage {
  role?: string;
  content?: unknown;
  toolName?: string;
  details?: unknown;
  isError?: boolean;
}

/**
 * Builds the script's view from Pi's transcript: everything after the latest prompt (a wake arrives
 * as one). pi-unified-exec's notices that ride with a run (`next_turn`) follow its first message: they
 * are `riders`, not the prompt.
 */
export function viewOf(messages: readonly unknown[]): ModelView {
  const transcript = messages as readonly TranscriptMessage[];
  let start = 0;
  let end = 0;
  for (let i = transcript.length - 1; i >= 0; i--) {
    if (transcript[i]?.role === "user") {
      end = i;
      start = i;
      const rides = (at: number) => transcript[at - 1]?.role === "user" && textOf(transcript[at]?.content).startsWith(WAKE_PREFIX);
      while (start > 0 && rides(start)) start--;
      break;
    }
  }
  const results: SeenResult[] = [];
  let last: SeenResult[] = [];
  let turn = 0;
  for (const message of transcript.slice(start + 1)) {
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
  const prompt = textOf(transcript[start]?.content);
  const riders = transcript.slice(start + 1, end + 1).map((message) => textOf(message.content));
  return { prompt, wake: prompt.startsWith(WAKE_PREFIX), turn, results, last, riders, messages: [...messages] };
}

/** The faux provider's message for a step (a step with no tool calls and no text says "done"). */
export function fauxReply(step: ModelStep): AssistantMessage {
  if ("error" in step) return fauxAssistantMessage(step.error, { stopReason: "error", errorMessage: step.error });
  if ("toolCalls" in step && step.toolCalls.length > 0) {
    return fauxAssistantMessage(
      step.toolCalls.map((toolCall) => fauxToolCall(toolCall.name, toolCall.arguments as Parameters<typeof fauxToolCall>[1])),
      { stopReason: "toolUse" },
    );
  }
  return fauxAssistantMessage("text" in step ? step.text : "done");
}

/**
 * pi-ai's faux provider (`faux`/`faux-1`) answering every model request with `answer(transcript)`.
 * The response step re-queues itself, so it answers any number of turns, prompts and reloads.
 * `tokenSize`: the size of every streamed token (pi-ai's small random tokens when absent); one large
 * token per block shows a reply at once.
 */
export function scriptedFaux(
  answer: (messages: unknown[]) => ModelStep | Promise<ModelStep>,
  options: { tokenSize?: number } = {},
): FauxProviderHandle {
  const { tokenSize } = options;
  const faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1" }],
    ...(tokenSize ? { tokenSize: { min: tokenSize, max: tokenSize } } : {}),
  });
  const step = async (context: { messages: unknown[] }) => {
    faux.appendResponses([step]);
    return fauxReply(await answer(context.messages));
  };
  faux.setResponses([step]);
  return faux;
}
