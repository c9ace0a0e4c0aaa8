/**
 * The benchmark's token workload: a fixed session of 31 calls a coding agent makes (short commands,
 * a failing build and test, a dev server polled, listed and killed, a PTY Python REPL round trip, a
 * flood, a progress bar, a silent wait), run through the real Pi CLI in our default format and in
 * Codex's (`PI_UNIFIED_EXEC_FORMAT=codex`), the same commands through Pi's bash tool, and the
 * previous release's header rebuilt from each default result's `structuredContent`. Counted by
 * `tokens.ts` (o200k). `npm run bench` prints the table; run alone
 * (`node --import tsx tests/bench/token-workload.ts`) it prints only the table.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ToolRecord } from "../helpers/events.ts";
import { PI_HOSTS, type PiHost } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, type ModelStep, type ModelView, say } from "../helpers/scripted-model.ts";
import { type FormatTokens, formatTokenTable, type ResultSample, tokenTable } from "./tokens.ts";

const BUILD =
  "printf 'src/main.c: In function main:\\nsrc/main.c:3:5: error: y undeclared (first use in this function)\\n    3 |     y = 2;\\n      |     ^\\nmake: *** [Makefile:4: main] Error 1\\n' >&2; exit 2";
const FAILING_TEST =
  "printf 'not ok 1 - adds numbers\\n  ---\\n  expected: 4\\n  actual: 5\\n  at: test/add.test.js:7:10\\n  ...\\n# tests 3\\n# pass 2\\n# fail 1\\n'; exit 1";
const SERVER =
  "echo 'listening on http://127.0.0.1:5173'; for i in $(seq 1 40); do sleep 0.3; echo \"GET /api/items 200 $((i * 3))ms\"; done";
const PROGRESS = "for i in $(seq 1 3000); do printf '\\rprogress %d%%' $((i / 30)); done; echo; echo done";
const FLOOD = "seq 1 2000000";

/** Commands run once each, in order, in every format (and through Pi's bash). */
const ONE_SHOT = [
  "echo hello",
  "pwd",
  "printf 'alpha\\nbeta\\ngamma\\n' > notes.txt && wc -l notes.txt",
  "cat notes.txt",
  "grep -n beta notes.txt",
  "test -f missing.txt",
  "ls -la",
  "uname -s",
  "seq 1 20",
  "python3 -c 'print(sum(range(100)))'",
  "mkdir -p src && printf 'int main(void) {\\n  int x = 1;\\n  y = 2;\\n}\\n' > src/main.c && ls src",
  "head -n 4 src/main.c",
  "wc -c notes.txt src/main.c",
  "git --version || true",
  BUILD,
  FAILING_TEST,
  FLOOD,
  PROGRESS,
];

type Step = (view: ModelView) => ModelStep;

/** The unified-exec workload: the one-shot commands, then a server, a REPL and a silent wait driven through sessions. */
function workloadSteps(): Step[] {
  let server = 0;
  let repl = 0;
  let waiting = 0;
  const idOf = (view: ModelView) => view.last[0]?.details?.session_id as number;
  return [
    ...ONE_SHOT.map((cmd) => () => call("exec_command", { cmd, yield_time_ms: 30_000 })),
    () => call("exec_command", { cmd: SERVER, yield_time_ms: 500 }),
    (view) => {
      server = idOf(view);
      return call("write_stdin", { session_id: server, yield_time_ms: 1_000 });
    },
    () => call("write_stdin", { session_id: server, yield_time_ms: 1_000 }),
    () => call("list_sessions", {}),
    () => call("write_stdin", { session_id: server, yield_time_ms: 500 }),
    () => call("kill_session", { session_id: server }),
    () => call("exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 1_500 }),
    (view) => {
      repl = idOf(view);
      return call("write_stdin", { session_id: repl, chars: "print(6*7)\\r", yield_time_ms: 1_000 });
    },
    () => call("write_stdin", { session_id: repl, chars: "squares = [i * i for i in range(8)]; squares\\r", yield_time_ms: 1_000 }),
    () => call("write_stdin", { session_id: repl, chars: "exit()\\r", yield_time_ms: 5_000 }),
    () => call("exec_command", { cmd: "sleep 1.5; echo finished", yield_time_ms: 250 }),
    (view) => {
      waiting = idOf(view);
      return call("write_stdin", { session_id: waiting, yield_time_ms: 250 });
    },
    () => call("write_stdin", { session_id: waiting, yield_time_ms: 5_000 }),
  ];
}

/** Pi's bash on the same work: the one-shot commands, the server run to its end, the REPL fed on stdin, the wait. */
const BASH_COMMANDS = [
  ...ONE_SHOT,
  SERVER.replace("seq 1 40", "seq 1 8"),
  "printf 'print(6*7)\\nsquares = [i * i for i in range(8)]; squares\\n' | python3 -i -q 2>&1",
  "sleep 1.5; echo finished",
];

/** Runs a list of steps as one prompt; returns the tool results in call order. */
async function runSteps(pi: PiRpcHost, name: string, list: Step[]): Promise<ToolRecord[]> {
  const run = await pi.run(name, (view) => list[view.turn]?.(view) ?? say("done"), 300_000);
  return run.tools;
}

/** Every field the previous release printed, in its order (before the lean header). */
const PREVIOUS_ORDER = [
  "session_id",
  "exit_code",
  "signal",
  "timed_out",
  "killed_by",
  "log_path",
  "cwd",
  "wall_time_seconds",
  "chunk_id",
  "original_token_count",
  "output_bytes_total",
  "quiet_ms",
  "omitted_bytes",
  "tty",
  "cols",
  "rows",
  "input",
  "failure_message",
  "completion_notification",
  "wait_status",
  "notice",
  "warning",
];

/**
 * The previous release's text for a job result: every field of `structuredContent` in the old order,
 * the log named as it was then (`job-<id>-<8 hex>.log`), then the output part of today's text.
 */
export function previousText(tool: ToolRecord): string {
  const fields = tool.structuredContent as Record<string, unknown> | undefined;
  if (!fields || typeof fields.status !== "string" || !("chunk_id" in fields)) return tool.text;
  const oldLog =
    typeof fields.log_path === "string" && fields.log_path !== "none"
      ? join(dirname(fields.log_path), `job-${basename(fields.log_path, ".log")}-${randomBytes(4).toString("hex")}.log`)
      : fields.log_path;
  const title = tool.text.split("\n")[0]!;
  const lines = PREVIOUS_ORDER.filter((key) => fields[key] !== undefined).map(
    (key) => `${key}: ${key === "log_path" ? oldLog : (fields[key] ?? "null")}`,
  );
  const at = tool.text.indexOf("\n---\n");
  return `${[title, ...lines].join("\n")}\n---\n${at === -1 ? "" : tool.text.slice(at + 5)}`;
}

export interface TokenWorkloadResult {
  rows: FormatTokens[];
  table: string;
}

/**
 * The headers counted hold `log_path`, so these hosts log where a user's Pi does, in the system's temp
 * dir: a test's Pi logs inside its own temp dir (`pi-process.ts`), a longer path that would cost
 * tokens no user pays. The log directories the results name are removed at the end.
 */
const USER_LOGS = { PI_UNIFIED_EXEC_LOG_DIR: tmpdir() };

/** The private log directories that `results` name (each is one host's, under the system's temp dir). */
function logDirectories(results: ToolRecord[]): Set<string> {
  const dirs = new Set<string>();
  for (const tool of results) {
    const path = tool.details?.log_path;
    if (typeof path === "string" && dirname(dirname(path)) === tmpdir() && basename(dirname(path)).startsWith("pi-unified-exec-"))
      dirs.add(dirname(path));
  }
  return dirs;
}

/** Runs the workload on `host` and counts its tokens per format. */
export async function tokenWorkload(host: PiHost): Promise<TokenWorkloadResult> {
  const samples: ResultSample[] = [];
  const logs = new Set<string>();
  try {
    await countFormats(host, samples, logs);
  } finally {
    for (const dir of logs) rmSync(dir, { recursive: true, force: true });
  }
  const order = ["default", "codex", "pi-bash", "previous"];
  const rows = tokenTable(samples).sort((a, b) => order.indexOf(a.format) - order.indexOf(b.format));
  return { rows, table: formatTokenTable(rows) };
}

async function countFormats(host: PiHost, samples: ResultSample[], logs: Set<string>): Promise<void> {
  const ours = await PiRpcHost.start(host, { args: ["--keep-builtin-bash"], env: USER_LOGS });
  try {
    const results = await runSteps(ours, "tokens default", workloadSteps());
    for (const dir of logDirectories(results)) logs.add(dir);
    for (const tool of results) samples.push({ format: "default", text: tool.text });
    for (const tool of results) samples.push({ format: "previous", text: previousText(tool) });
    const bash = await runSteps(
      ours,
      "tokens bash",
      BASH_COMMANDS.map((command) => () => call("bash", { command, timeout: 60 })),
    );
    for (const tool of bash) samples.push({ format: "pi-bash", text: tool.text });
  } finally {
    await ours.close();
  }
  const codex = await PiRpcHost.start(host, { env: { ...USER_LOGS, PI_UNIFIED_EXEC_FORMAT: "codex" } });
  try {
    const results = await runSteps(codex, "tokens codex", workloadSteps());
    for (const dir of logDirectories(results)) logs.add(dir);
    for (const tool of results) samples.push({ format: "codex", text: tool.text });
  } finally {
    await codex.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const host = PI_HOSTS.at(-1)!;
  tokenWorkload(host)
    .then(({ rows, table }) => {
      console.log(`o200k tokens per call over the workload (Pi ${host.version})\n`);
      console.log(table);
      const dir = join(import.meta.dirname, "results");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "tokens-latest.json"), `${JSON.stringify(rows, null, 2)}\n`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
