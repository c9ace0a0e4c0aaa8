/**
 * The fixed prompt: what every model request carries for pi-unified-exec, as a real Pi host sends it.
 * A Pi CLI runs one prompt with the faux model, which records the request; the five tools'
 * definitions (name, description, JSON schema, as the provider receives them) and the lines our
 * extension adds to Pi's system prompt (the lines of a run with it that a run without it lacks) are
 * counted in o200k tokens. The test `tests/e2e/prompt-budget.test.ts` holds the budget; `npm run bench`
 * prints the breakdown; run alone (`node --import tsx tests/bench/prompt-tokens.ts`) it prints both hosts.
 */
import { pathToFileURL } from "node:url";
import { PI_HOSTS, type PiHost } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { say } from "../helpers/scripted-model.ts";
import { tokens } from "./tokens.ts";

/** Our tools, in the order the breakdown names them. */
export const OUR_TOOLS = ["exec_command", "write_stdin", "kill_session", "list_sessions", "set_on_exit"] as const;

/** The budget of SPEC §9: definitions plus our system-prompt lines, with every feature. */
export const PROMPT_BUDGET_TOKENS = 1_250;

/** How the fixed prompt grew and shrank (o200k, newest Pi), for the benchmark's history line. */
export const PROMPT_TOKEN_HISTORY: readonly { version: string; tokens: number }[] = [
  { version: "0.11.0", tokens: 1_234 },
  { version: "0.12.0 before issue 38", tokens: 3_602 },
];

interface ToolDefinitionSent {
  name: string;
  description: string;
  parameters: unknown;
}

/** What one request carried: the system prompt as text and every tool definition. */
export interface RecordedRequest {
  /** The system prompt as text, without the sections every run words differently ({@link RUN_SECTIONS}). */
  systemPrompt: string;
  tools: ToolDefinitionSent[];
}

export interface PromptTokens {
  host: string;
  /** o200k tokens of each of our tools' definition (`{name, description, parameters}` as JSON). */
  perTool: Record<string, number>;
  definitions: number;
  /** Our lines in the system prompt, as Pi rendered them (tools list entries and guidelines). */
  lines: string[];
  lineTokens: number;
  total: number;
}

type SystemMessage = { role: "system"; content?: unknown; sections?: Record<string, string | null>; toolsAdded?: ToolDefinitionSent[] };

/**
 * Sections that differ between any two runs whatever the extensions: `cwd` names each run's own
 * temporary directory. Every other section is compared line by line.
 */
const RUN_SECTIONS = new Set(["cwd"]);

/** The system prompt and tools of a request, from the transcript's system messages (sections replaced by name, in order). */
export function requestOf(messages: readonly unknown[]): RecordedRequest {
  const sections = new Map<string, string>();
  const tools = new Map<string, ToolDefinitionSent>();
  const contents: string[] = [];
  for (const message of messages as SystemMessage[]) {
    if (message?.role !== "system") continue;
    if (typeof message.content === "string" && message.content) contents.push(message.content);
    for (const [name, text] of Object.entries(message.sections ?? {})) {
      if (text === null) sections.delete(name);
      else sections.set(name, text);
    }
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  for (const name of RUN_SECTIONS) sections.delete(name);
  return { systemPrompt: [...contents, ...sections.values()].join("\n\n"), tools: [...tools.values()] };
}

/** Starts `host` (with our extension or without), records the first request of one prompt, and quits. */
export async function recordRequest(host: PiHost, withExtension: boolean): Promise<RecordedRequest> {
  const pi = await PiRpcHost.start(host, withExtension ? {} : { extensions: [] });
  try {
    let seen: unknown[] | undefined;
    await pi.run("count the prompt", (view) => {
      seen ??= view.messages;
      return say("done");
    });
    if (!seen) throw new Error(`${host.name} sent no request`);
    return requestOf(seen);
  } finally {
    await pi.close();
  }
}

/** The lines of `ours` that `baseline` lacks (each line of the baseline cancels one equal line). */
export function addedLines(ours: string, baseline: string): string[] {
  const left = new Map<string, number>();
  for (const line of baseline.split("\n")) left.set(line, (left.get(line) ?? 0) + 1);
  return ours.split("\n").filter((line) => {
    const count = left.get(line) ?? 0;
    if (count > 0) left.set(line, count - 1);
    return count === 0 && line.trim() !== "";
  });
}

/** Counts the fixed prompt of `host`: two runs, one with our extension and one without. */
export async function promptTokens(host: PiHost): Promise<PromptTokens> {
  const ours = await recordRequest(host, true);
  const baseline = await recordRequest(host, false);
  const perTool: Record<string, number> = {};
  for (const name of OUR_TOOLS) {
    const tool = ours.tools.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`${host.name} did not send ${name}; it sent ${ours.tools.map((t) => t.name).join(", ")}`);
    perTool[name] = tokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }
  const lines = addedLines(ours.systemPrompt, baseline.systemPrompt);
  const definitions = Object.values(perTool).reduce((a, b) => a + b, 0);
  const lineTokens = lines.length ? tokens(lines.join("\n")) : 0;
  return { host: host.name, perTool, definitions, lines, lineTokens, total: definitions + lineTokens };
}

/** One line of breakdown: total, definitions per tool, lines. */
export function formatPromptTokens(row: PromptTokens): string {
  const tools = OUR_TOOLS.map((name) => `${name} ${row.perTool[name]}`).join(", ");
  return `${row.host}: ${row.total} tokens = definitions ${row.definitions} (${tools}) + ${row.lines.length} prompt lines ${row.lineTokens}`;
}

/** The history line: each recorded total, then this run's. */
export function formatPromptHistory(now: number): string {
  return [...PROMPT_TOKEN_HISTORY.map(({ version, tokens: count }) => `${count} (${version})`), `${now} (now)`].join(" → ");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  (async () => {
    for (const host of PI_HOSTS) {
      const row = await promptTokens(host);
      console.log(formatPromptTokens(row));
      for (const line of row.lines) console.log(`    ${line}`);
    }
    const newest = await promptTokens(PI_HOSTS.at(-1)!);
    console.log(`history: ${formatPromptHistory(newest.total)}`);
  })().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
