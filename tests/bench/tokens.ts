/**
 * Token cost of model-visible result texts, for the benchmark's token table: each text is split
 * into header and output by its format's rule and counted with a real o200k tokenizer
 * (`gpt-tokenizer`, a dev dependency: only bench code may import it). `npm run bench` feeds it the
 * texts of a fixed workload; run on its own (`node --import tsx tests/bench/tokens.ts`) it checks
 * the tokenizer and prints a table for a few sample results.
 */
import { pathToFileURL } from "node:url";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Where a format's header ends. `dashes`: before the line `---` (our format, and the previous
 * release's). `codex`: before the line `Output:`. `pi-bash`: Pi's bash tool has no header; its one
 * line of framing is the status it appends (`Command exited with code 2`). A text without its
 * separator (an error) is all header: none of it is output.
 */
export type HeaderRule = "dashes" | "codex" | "pi-bash";

/** One model-visible result text (`content[0].text`) and the format that wrote it. */
export interface ResultSample {
  /** Row of the table: `default`, `codex`, `pi-bash`, `previous`, … */
  format: string;
  text: string;
}

/** The rule of each format the benchmark compares. */
export const HEADER_RULES: Record<string, HeaderRule> = { default: "dashes", previous: "dashes", codex: "codex", "pi-bash": "pi-bash" };

const PI_BASH_STATUS =
  /(?:^|\n\n)(Command (?:exited with code -?\d+|aborted|timed out after \d+ seconds[^\n]*|terminated without an exit code))$/;

/** The header part of `text` under `rule`. */
export function headerOf(text: string, rule: HeaderRule): string {
  if (rule === "pi-bash") return PI_BASH_STATUS.exec(text)?.[1] ?? "";
  const separator = rule === "dashes" ? "\n---\n" : "\nOutput:\n";
  const at = text.indexOf(separator);
  if (at !== -1) return text.slice(0, at);
  // A result with no output ends at the separator itself (Codex: `…\nOutput:`).
  const bare = separator.slice(0, -1);
  return text.endsWith(bare) ? text.slice(0, -bare.length) : text;
}

/** o200k tokens of `text`; text that spells a special token (`<|endoftext|>`) counts as plain text. */
export function tokens(text: string): number {
  return countTokens(text, { disallowedSpecial: new Set() });
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
export const mean = (values: readonly number[]): number =>
  values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0;

/** Tokens of one format over the workload: per call, header and total. */
export interface FormatTokens {
  format: string;
  calls: number;
  header: { median: number; mean: number; perCall: number[] };
  total: { median: number; mean: number; sum: number; perCall: number[] };
}

/** Counts every sample and groups the counts by format, in the order the formats first appear. */
export function tokenTable(samples: readonly ResultSample[], rules: Record<string, HeaderRule> = HEADER_RULES): FormatTokens[] {
  const byFormat = new Map<string, { headers: number[]; totals: number[] }>();
  for (const { format, text } of samples) {
    const rule = rules[format];
    if (!rule) throw new Error(`no header rule for format ${format}; give one in rules`);
    const row = byFormat.get(format) ?? { headers: [], totals: [] };
    row.headers.push(tokens(headerOf(text, rule)));
    row.totals.push(tokens(text));
    byFormat.set(format, row);
  }
  return [...byFormat].map(([format, { headers, totals }]) => ({
    format,
    calls: totals.length,
    header: { median: median(headers), mean: mean(headers), perCall: headers },
    total: { median: median(totals), mean: mean(totals), sum: totals.reduce((a, b) => a + b, 0), perCall: totals },
  }));
}

/** The table as text, one line per format. */
export function formatTokenTable(rows: readonly FormatTokens[]): string {
  const round = (value: number) => (Math.round(value * 10) / 10).toString();
  const head = ["format", "calls", "header median", "header mean", "total median", "total mean", "total sum"];
  const body = rows.map((row) => [
    row.format,
    `${row.calls}`,
    round(row.header.median),
    round(row.header.mean),
    round(row.total.median),
    round(row.total.mean),
    `${row.total.sum}`,
  ]);
  const widths = head.map((title, i) => Math.max(title.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(head), ...body.map(line)].join("\n");
}

/** A few results of each format, for the self-check: a short command, a failing build, a running server, a cut flood. */
async function sampleTexts(): Promise<ResultSample[]> {
  const { jobResult } = await import("../../src/pi/results/job-result.ts");
  const { codexResultText } = await import("../../src/pi/results/codex.ts");
  const { formatSize, truncateTail } = await import("@earendil-works/pi-coding-agent");
  /** Pi's bash tool's cap and footer, as it words them (its footer names its own temp file). */
  const piBash = (text: string, logPath: string) => {
    const cut = truncateTail(text);
    if (!cut.truncated) return text;
    const lines = `${cut.totalLines - cut.outputLines + 1}-${cut.totalLines} of ${cut.totalLines}`;
    const limit = cut.truncatedBy === "lines" ? "" : ` (${formatSize(cut.maxBytes)} limit)`;
    return `${cut.content}\n\n[Showing lines ${lines}${limit}. Full output: ${logPath}]`;
  };
  const { jobReport } = await import("../helpers/reports.ts");
  const build =
    "src/main.c:3:5: error: use of undeclared identifier 'y'\n    y = 2;\n    ^\n1 error generated.\nmake: *** [main] Error 1\n";
  const flood = Array.from({ length: 3_000 }, (_, i) => `line ${i + 1}`).join("\n");
  const cases = [
    { cmd: "echo ok", out: "ok\n", exit: 0, ms: 12 },
    { cmd: "make", out: build, exit: 2, ms: 840 },
    { cmd: "npm run dev", out: "server listening on http://localhost:5173\n", session: 7, ms: 10_000 },
    { cmd: "seq 1 3000", out: flood, exit: 0, ms: 95 },
  ];
  const samples: ResultSample[] = [];
  for (const c of cases) {
    const report = jobReport({
      job: {
        jobId: c.session ?? 7,
        command: c.cmd,
        cwd: "/home/you/project",
        outputBytesTotal: Buffer.byteLength(c.out),
        quietMs: 5,
        logPath: "/tmp/pi-unified-exec-Xa1b2c/job-7-5cc5e104.log",
        tty: false,
        ...(c.exit === undefined ? {} : { exit: { exitCode: c.exit, signal: null } }),
      },
      window: { ms: 10_000 },
      waitEnd: c.exit === undefined ? "deadline" : "exited",
      wallMs: c.ms,
      output: { text: c.out, omittedBytes: 0 },
    });
    const text = (jobResult(report).content[0] as { text: string }).text;
    samples.push({ format: "default", text });
    const originalTokenCount = Math.ceil(Buffer.byteLength(c.out) / 4);
    samples.push({
      format: "codex",
      text: codexResultText({ chunkId: "3fa91c", wallMs: c.ms, exitCode: c.exit, sessionId: c.session, output: c.out, originalTokenCount }),
    });
    const status = c.exit ? `\n\nCommand exited with code ${c.exit}` : "";
    const shown = piBash(c.out.replace(/\n$/, ""), "/tmp/pi-bash-5cc5e104.log");
    samples.push({ format: "pi-bash", text: `${shown || "(no output)"}${status}` });
  }
  return samples;
}

async function selfCheck(): Promise<void> {
  // Known counts (o200k, cross-checked with js-tiktoken): the tokenizer and its options are the right ones.
  const codexHeader = "Chunk ID: 3fa91c\nWall time: 0.5123 seconds\nProcess exited with code 0\nOriginal token count: 37\nOutput:\n";
  if (tokens(codexHeader) !== 35) throw new Error(`o200k count of the reference Codex header is ${tokens(codexHeader)}, expected 35`);
  if (tokens("<|endoftext|>") < 2) throw new Error("a special-token string must count as plain text");
  if (
    headerOf("a: 1\n---\nout", "dashes") !== "a: 1" ||
    headerOf("H\nOutput:", "codex") !== "H" ||
    headerOf("x\n\nCommand exited with code 2", "pi-bash") !== "Command exited with code 2"
  ) {
    throw new Error("header split is wrong");
  }
  const rows = tokenTable(await sampleTexts());
  console.log("o200k tokens per call (sample results; `npm run bench` measures the real workload)\n");
  console.log(formatTokenTable(rows));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  selfCheck().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
