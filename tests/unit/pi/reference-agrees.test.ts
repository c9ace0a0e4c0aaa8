/**
 * One source of truth for the tools' parameters: the tools as the extension registers them (their
 * parameter and result schemas, read at run time) and the limits the core enforces are the facts;
 * docs/reference.md's tables and the README's tool lines and example calls must agree with them.
 * Names, required parameters, enum values, schema bounds, defaults and clamps, status tokens, the
 * fields `list_sessions` returns, the escapes `chars` decodes. It reads facts, never descriptions'
 * wording, so a rewritten description or a new parameter fails here only when the docs miss it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Value } from "typebox/value";
import {
  DEFAULT_COLS,
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_ROWS,
  DEFAULT_TIMEOUT_S,
  DEFAULT_WRITE_YIELD_MS,
  decodeEscapes,
  emptyPollCapMs,
  MAX_COLS,
  MAX_ROWS,
  MAX_TIMEOUT_S,
  MAX_YIELD_MS,
  MIN_COLS,
  MIN_EMPTY_POLL_MS,
  MIN_ROWS,
  MIN_YIELD_MS,
  SHELL_NAMES,
} from "../../../src/core/index.ts";
import type { WaitEnd } from "../../../src/core/job/job.ts";
import { MAX_ASK_USER_CHARS } from "../../../src/core/request/request.ts";
import { LOGIN_SHELLS, shellInvocation } from "../../../src/core/request/shell.ts";
import { MAX_CONDITIONAL_EXEC_YIELD_MS, MAX_QUIET_MS, MIN_QUIET_MS } from "../../../src/core/shared/pattern-limits.ts";
import piUnifiedExec from "../../../src/index.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { REPO_ROOT } from "../../helpers/hosts.ts";
import { jobReport } from "../../helpers/reports.ts";

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
}

interface Tool {
  name: string;
  parameters: Schema;
  outputSchema?: Schema;
}

/** The tools exactly as the extension registers them (nothing else is started: no session begins). */
function registeredTools(): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  const pi = new Proxy(
    {},
    {
      get: (_target, key) =>
        key === "registerTool" ? (tool: Tool) => tools.set(tool.name, tool) : key === "getFlag" ? () => false : () => undefined,
    },
  );
  piUnifiedExec(pi as never);
  return tools;
}

const tools = registeredTools();
const reference = readFileSync(join(REPO_ROOT, "docs", "reference.md"), "utf8");
const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/** A heading's section: from `heading` to the next heading of its level or higher. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, `no heading ${heading}`);
  const level = heading.indexOf(" ");
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  return end === -1 ? rest : rest.slice(0, end);
}

/** The rows of a `| param | default | rule |` table: each named parameter with its whole row. */
function tableRows(text: string): Map<string, { cells: string[]; row: string }> {
  const rows = new Map<string, { cells: string[]; row: string }>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const cells = line.split(" | ").map((cell) => cell.replace(/^\| |\s*\|$/g, ""));
    for (const name of [...cells[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)) rows.set(name, { cells, row: line });
  }
  return rows;
}

/** Numbers as the docs write them (`86 400`, `30 000`) made plain (`86400`). */
const plainNumbers = (text: string) => text.replace(/(\d)[ {2}](?=\d{3}\b)/g, "$1");

/** The words inside a text's code spans: `wait_status: matched | quiet` gives wait_status, matched, quiet. */
function codeWords(text: string): Set<string> {
  return new Set([...text.matchAll(/`([^`]+)`/g)].flatMap((match) => match[1]!.split(/[^\w]+/).filter(Boolean)));
}

/** The literal values a result schema allows for a field (a `Literal` or a union of them). */
function literals(schema: Schema | undefined): string[] {
  if (!schema) return [];
  if (schema.const !== undefined) return [String(schema.const)];
  if (schema.enum) return schema.enum.map(String);
  return (schema.anyOf ?? []).flatMap(literals);
}

/** What the core enforces for a parameter beyond its schema: numbers its reference row must give. */
const LIMITS: Record<string, Record<string, number[]>> = {
  exec_command: {
    yield_time_ms: [DEFAULT_EXEC_YIELD_MS, MIN_YIELD_MS, MAX_YIELD_MS, MAX_CONDITIONAL_EXEC_YIELD_MS],
    cols: [DEFAULT_COLS, MIN_COLS, MAX_COLS],
    rows: [DEFAULT_ROWS, MIN_ROWS, MAX_ROWS],
    until_quiet_ms: [MIN_QUIET_MS, MAX_QUIET_MS],
    timeout_s: [DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S],
  },
  write_stdin: {
    yield_time_ms: [DEFAULT_WRITE_YIELD_MS, MIN_YIELD_MS, MAX_YIELD_MS, MIN_EMPTY_POLL_MS, emptyPollCapMs({})],
    ask_user: [MAX_ASK_USER_CHARS],
  },
};

/** Every example call the docs show: `> tool {json}`. */
function exampleCalls(markdown: string): { tool: string; args: Record<string, unknown>; line: string }[] {
  return [...markdown.matchAll(/^> (\w+) (\{.*\})\s*$/gm)].map((match) => ({
    tool: match[1]!,
    args: JSON.parse(match[2]!) as Record<string, unknown>,
    line: match[0],
  }));
}

describe("docs/reference.md and the README agree with the tools as registered", () => {
  it("names the same tools: one reference section each, all of them in the README", () => {
    const headings = [...section(reference, "## Tools").matchAll(/^### `(\w+)`$/gm)].map((match) => match[1]);
    assert.deepEqual(headings.sort(), [...tools.keys()].sort());
    const listed = /^(\w+) tools \(([^)]*)\)/m.exec(readme);
    assert.ok(listed, "the README's line naming the tools");
    assert.deepEqual([...listed[2]!.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort(), [...tools.keys()].sort());
    const words = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight"];
    assert.equal(listed[1], words[tools.size], "the count in words");
  });

  for (const [name, tool] of tools) {
    it(`${name}: the reference's table has every parameter and no other, with what is required, enum values, bounds and the core's limits`, () => {
      const body = section(reference, `### \`${name}\``);
      const properties = Object.keys(tool.parameters.properties ?? {});
      if (properties.length === 0) {
        assert.match(body, /^No parameters\./m);
        return;
      }
      const rows = tableRows(body);
      assert.deepEqual([...rows.keys()].sort(), [...properties].sort(), "the table's parameters");
      const required = new Set(tool.parameters.required ?? []);
      for (const [param, { cells, row }] of rows) {
        const schema = tool.parameters.properties![param]!;
        assert.equal(cells[1] === "required", required.has(param), `${param}: required is "${cells[1]}"`);
        for (const value of schema.enum ?? []) assert.ok(row.includes(`\`${value}\``) || row.includes(`"${value}"`), `${param}: ${value}`);
        const plain = plainNumbers(row);
        for (const bound of [schema.minimum, schema.maximum]) {
          if (bound !== undefined && bound > 1) assert.match(plain, new RegExp(`\\b${bound}\\b`), `${param}: bound ${bound}`);
        }
        for (const number of LIMITS[name]?.[param] ?? []) assert.match(plain, new RegExp(`\\b${number}\\b`), `${param}: ${number}`);
      }
    });
  }

  it("every parameter of every tool keeps a description (the model reads nothing else about it)", () => {
    for (const [name, tool] of tools) {
      for (const [param, schema] of Object.entries(tool.parameters.properties ?? {})) {
        assert.ok((schema as { description?: string }).description?.trim(), `${name}.${param} has no description`);
      }
    }
  });

  it("login: the flag the shell really gets, and every shell it is refused for", () => {
    const row = tableRows(section(reference, "### `exec_command`")).get("login")!.row;
    const flag = shellInvocation("bash", "true", true).args[0]!;
    assert.ok(row.includes(`\`${flag}\``), `the row names ${flag}`);
    for (const shell of SHELL_NAMES) {
      if (!LOGIN_SHELLS.includes(shell)) assert.ok(row.includes(`\`${shell}\``), `refused for ${shell}`);
    }
  });

  it("status tokens: every value set_on_exit and kill_session can return is in their sections, every wait_status under Waits", () => {
    const setOnExit = codeWords(section(reference, "### `set_on_exit`"));
    for (const token of literals(tools.get("set_on_exit")!.outputSchema?.properties?.status)) assert.ok(setOnExit.has(token), token);
    const kill = codeWords(section(reference, "### `kill_session`"));
    for (const field of ["status", "cleanup"])
      for (const token of literals(tools.get("kill_session")!.outputSchema?.properties?.[field])) assert.ok(kill.has(token), token);
    const waits = codeWords(section(reference, "## Waits"));
    for (const token of literals(tools.get("exec_command")!.outputSchema?.properties?.wait_status))
      assert.ok(waits.has(token), `wait_status ${token}`);
  });

  it("wait_status: the reference's two lists are exactly what a conditional wait and a wait until a UTC time return", () => {
    const ends: WaitEnd[] = ["exited", "deadline", "aborted", "steered", "matched", "quiet", "listening", "background"];
    const statusOf = (end: WaitEnd, conditional: boolean) =>
      jobResult(
        jobReport({ waitEnd: end, conditional, ...(end === "aborted" ? { cancelled: true } : {}), job: { exit: undefined } }),
        conditional ? {} : { absoluteUntil: "2030-01-01T00:00:00Z" },
      ).details.wait_status;
    const conditional = new Set(ends.map((end) => statusOf(end, true)));
    // A wait until a time alone ends only by the exit, its deadline, a cancel, a steer or the shell's exit.
    const absolute = new Set((["exited", "deadline", "aborted", "steered", "background"] as const).map((end) => statusOf(end, false)));
    const lists = [...section(reference, "## Waits").matchAll(/`wait_status: (\w+(?: \| \w+)+)`/g)].map(
      (match) => new Set(match[1]!.split(" | ")),
    );
    assert.equal(lists.length, 2, "a conditional wait's list, then an absolute wait's");
    assert.deepEqual(lists[0], conditional);
    assert.deepEqual(lists[1], absolute);
    const schema = literals(tools.get("exec_command")!.outputSchema?.properties?.wait_status);
    assert.deepEqual(new Set(schema), new Set([...conditional, ...absolute]), "the result schema allows exactly those");
  });

  it("set_on_exit: the reference lists exactly the statuses its result schema allows, for the exit wake and for the pattern", () => {
    const schema = tools.get("set_on_exit")!.outputSchema!.properties!;
    const patternList = /`wake_on_pattern_status: (\w+(?: \| \w+)+)`/.exec(reference)?.[1] ?? "";
    assert.deepEqual(new Set(patternList.split(" | ")), new Set(literals(schema.wake_on_pattern_status)));
    const body = section(reference, "### `set_on_exit`");
    const statuses = /The result says ((?:`\w+`(?:, | or )?)+)/.exec(body.replace(/\s+/g, " "))?.[1] ?? "";
    assert.deepEqual(new Set([...statuses.matchAll(/`(\w+)`/g)].map((match) => match[1])), new Set(literals(schema.status)));
  });

  it("list_sessions: the reference names every field a listed job can carry", () => {
    const body = codeWords(section(reference, "### `list_sessions`"));
    const session = tools.get("list_sessions")!.outputSchema!.properties!.sessions!.items!;
    for (const field of Object.keys(session.properties!)) assert.ok(body.has(field), field);
    assert.ok(body.has("tool_time_utc"));
  });

  it("chars: the reference lists exactly the escapes the decoder knows, and the description names only real ones", () => {
    const line = /^Escapes in `chars`: (.*(?:\n(?!\n).*)*)/m.exec(section(reference, "### `write_stdin`"))?.[1] ?? "";
    const listed = new Set([...line.matchAll(/\\([a-z0-9\\"'])/gi)].map((match) => match[1]!));
    const decodes = (c: string) => !decodeEscapes(`\\${c}`).equals(Buffer.from(`\\${c}`));
    const known = [..."abcdefghijklmnopqrstuvwxyz0123456789\\\"'"].filter(decodes);
    assert.deepEqual([...listed].filter((c) => c !== "x" && c !== "u").sort(), known.filter((c) => c !== "x" && c !== "u").sort());
    assert.ok(decodes("x") === false && !decodeEscapes("\\x41").equals(Buffer.from("\\x41")), "\\xHH decodes");
    const description = (tools.get("write_stdin")!.parameters.properties!.chars as { description?: string }).description ?? "";
    for (const match of description.matchAll(/\\\\([a-z0-9])(?![a-z0-9{])/gi))
      assert.ok(decodes(match[1]!), `the description's \\${match[1]}`);
  });

  it("every example call in the README and the reference is valid for its tool and within the waits the tool allows", () => {
    const calls = [...exampleCalls(readme), ...exampleCalls(reference)];
    assert.ok(calls.length > 5, "the docs show example calls");
    for (const { tool: name, args, line } of calls) {
      const tool = tools.get(name);
      assert.ok(tool, `${line}: no tool ${name}`);
      assert.ok(Value.Check(tool.parameters as never, args as unknown), `${line}: not valid for the schema`);
      const window = args.yield_time_ms;
      if (typeof window !== "number") continue;
      const conditional = args.until_pattern !== undefined || args.until_quiet_ms !== undefined || args.until_listening !== undefined;
      const emptyPoll = name === "write_stdin" && !args.chars && !args.chars_b64;
      const cap = emptyPoll ? emptyPollCapMs({}) : conditional ? MAX_CONDITIONAL_EXEC_YIELD_MS : MAX_YIELD_MS;
      assert.ok(window <= cap, `${line}: yield_time_ms ${window} above ${cap}`);
    }
  });

  it("the README's exec_command line gives the default wait and both maxima, as the core has them", () => {
    const line = /^- `exec_command` runs a command[\s\S]*?\n(?=- |\n)/m.exec(readme)?.[0] ?? "";
    assert.match(line, new RegExp(`default ${DEFAULT_EXEC_YIELD_MS / 1000} s`), line);
    assert.match(line, new RegExp(`${MAX_YIELD_MS / 1000} s`), line);
    assert.match(line, new RegExp(`${MAX_CONDITIONAL_EXEC_YIELD_MS / 1000} s`), line);
  });
});
