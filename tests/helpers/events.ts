/** Turns a host's event stream into what tests assert on: one record per tool call. */
import { textOf } from "../../examples/lib/model-script.ts";
import { WAKE_MESSAGE_TYPE } from "../../src/pi/wake-message.ts";

/** The text blocks of a message or tool result content, joined (the script language's own). */
export { textOf };

/** A finalized tool call, from `tool_execution_start` and `tool_execution_end`. */
export interface ToolRecord {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The model-visible text (all text blocks joined). */
  text: string;
  details: any;
  structuredContent: any;
  isError: boolean;
  durationMs: number | undefined;
  parentToolCallId: string | undefined;
}

/** A Pi event as it appears in JSON and RPC output. */
export type PiEvent = { type: string } & Record<string, any>;

/** The outcome of one prompt: its tool calls in the order they finished, and its events. */
export interface Run {
  tools: ToolRecord[];
  events: PiEvent[];
  /** Text of the last assistant message. */
  finalText: string;
}

export function runOf(events: PiEvent[]): Run {
  const started = new Map<string, PiEvent>();
  const tools: ToolRecord[] = [];
  let finalText = "";
  for (const event of events) {
    if (event.type === "tool_execution_start") started.set(event.toolCallId, event);
    if (event.type === "tool_execution_end") {
      const start = started.get(event.toolCallId);
      tools.push({
        id: event.toolCallId,
        name: event.toolName,
        args: start?.args ?? {},
        text: textOf(event.result?.content),
        details: event.result?.details,
        structuredContent: event.result?.structuredContent,
        isError: event.isError === true,
        durationMs: event.durationMs,
        parentToolCallId: event.parentToolCallId,
      });
    }
    if (event.type === "message_end" && event.message?.role === "assistant") finalText = textOf(event.message.content);
  }
  return { tools, events, finalText };
}

/** The tool calls of a run in the order the model issued them (Pi may finish parallel calls in any order). */
export function inCallOrder(run: Run): ToolRecord[] {
  const order = run.events.filter((e) => e.type === "tool_execution_start").map((e) => e.toolCallId as string);
  return [...run.tools].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
}

/** The `key: value` header of a job result's text, as an object (values as strings). */
export function headerOf(text: string): Record<string, string> {
  const header: Record<string, string> = {};
  const end = text.indexOf("\n---\n");
  for (const line of text.slice(0, end === -1 ? text.length : end).split("\n")) {
    const colon = line.indexOf(": ");
    if (colon > 0) header[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return header;
}

/** The output part of a job result's text (after `---`). */
export function outputOf(text: string): string {
  const end = text.indexOf("\n---\n");
  return end === -1 ? "" : text.slice(end + 5);
}

/** A completion wake the extension sent, as it appears in the event stream. */
export function isWake(record: PiEvent): boolean {
  return record.type === "message_end" && record.message?.customType === WAKE_MESSAGE_TYPE;
}
