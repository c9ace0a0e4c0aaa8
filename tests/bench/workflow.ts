/**
 * The "workflow" table of `npm run bench`: what it costs the agent to start a dev server and know it is
 * ready, counted in tool calls and wall time to "ready", three ways on the same server:
 * - `until_pattern`: one exec_command that returns when the ready line appears;
 * - plain polls: exec_command with its default window, then empty write_stdin polls with theirs,
 *   until a result shows the ready line (what a model does without a condition);
 * - Pi's bash tool: `cmd > log &`, then `sleep 5; tail log` calls until the log shows it.
 * The server prints a line, becomes ready after a fixed delay (2 s, then 20 s), and keeps running;
 * every strategy's server is stopped before the next starts. Faux model turns take no time, so the
 * wall time is the tools' and the windows' own.
 * Run alone: `node --import tsx tests/bench/workflow.ts`.
 */
import { EXTENSION_ENTRY, PI_HOSTS } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, type ModelStep, type ModelView, say } from "../helpers/scripted-model.ts";

const READY = "ready on http://localhost:8765";
/** Pi's bash tool has no wait of its own: this is the sleep a model puts between its checks. */
const BASH_POLL_SLEEP_S = 5;
/** How many times the 2 s server is measured (the 20 s one once: it is slow by design, and spans several windows). */
const SHORT_RUNS = 3;
const STRATEGIES = ["until_pattern", "plain polls", "bash tool"] as const;

type Strategy = (typeof STRATEGIES)[number];

export interface WorkflowFigure {
  server_ready_after_s: number;
  strategy: Strategy;
  calls: number;
  seconds_to_ready: number;
}

function server(readyAfterS: number): string {
  return `echo starting dev server; sleep ${readyAfterS}; echo '${READY}'; exec sleep 600`;
}

const sawReady = (view: ModelView) => view.last.some((result) => result.text.includes(READY));

/** The scripted model of each strategy, up to the result that shows the ready line. */
function script(strategy: Strategy, readyAfterS: number, log: string): (view: ModelView) => ModelStep {
  const cmd = server(readyAfterS);
  return (view) => {
    if (view.turn > 0 && sawReady(view)) return say("the server is ready");
    if (view.turn > 60) throw new Error(`${strategy}: no ready line after 60 calls`);
    if (strategy === "until_pattern") {
      return view.turn === 0 ? call("exec_command", { cmd, until_pattern: "ready on", yield_time_ms: 120_000 }) : poll(view);
    }
    if (strategy === "plain polls") return view.turn === 0 ? call("exec_command", { cmd }) : poll(view);
    return view.turn === 0
      ? call("bash", { command: `(${cmd}) > ${log} 2>&1 & echo $! > ${log}.pid` })
      : call("bash", { command: `sleep ${BASH_POLL_SLEEP_S}; tail -n 5 ${log}` });
  };
}

/** An empty poll of the session the first call returned, with write_stdin's default window. */
function poll(view: ModelView): ModelStep {
  const sessionId = view.results.find((result) => result.details?.session_id !== undefined)?.details.session_id;
  if (sessionId === undefined) throw new Error("the server exited before it was ready");
  return call("write_stdin", { session_id: sessionId });
}

/** Stops the server a strategy started, so the next one starts alone. */
async function stop(pi: PiRpcHost, strategy: Strategy, log: string, sessionId: number | undefined): Promise<void> {
  await pi.run(`stop ${strategy}`, (view) => {
    if (view.turn > 0) return say("stopped");
    if (strategy === "bash tool") return call("bash", { command: `kill $(cat ${log}.pid); rm -f ${log} ${log}.pid` });
    return call("kill_session", { session_id: sessionId });
  });
}

/** Measures every strategy on a server ready after 2 s (median of a few runs) and after 20 s. */
export async function workflowBenchmark(pi: PiRpcHost): Promise<WorkflowFigure[]> {
  const figures: WorkflowFigure[] = [];
  for (const readyAfterS of [2, 20]) {
    const runs = readyAfterS === 2 ? SHORT_RUNS : 1;
    for (const strategy of STRATEGIES) {
      const measured: { calls: number; seconds: number }[] = [];
      for (let i = 0; i < runs; i++) {
        const log = `/tmp/piue-bench-server-${process.pid}.log`;
        const started = performance.now();
        const run = await pi.run(`${strategy}, ready after ${readyAfterS} s`, script(strategy, readyAfterS, log), 300_000);
        const seconds = (performance.now() - started) / 1000;
        measured.push({ calls: run.tools.length, seconds });
        await stop(pi, strategy, log, run.tools[0]?.details?.session_id);
      }
      measured.sort((a, b) => a.seconds - b.seconds);
      const middle = measured[Math.floor(measured.length / 2)]!;
      figures.push({
        server_ready_after_s: readyAfterS,
        strategy,
        calls: middle.calls,
        seconds_to_ready: Math.round(middle.seconds * 10) / 10,
      });
    }
  }
  return figures;
}

/** The table's rows: one per server, each strategy's calls and seconds to ready. */
export function workflowRows(figures: WorkflowFigure[]): [string, string][] {
  return [2, 20].map((readyAfterS) => [
    `dev server ready after ${readyAfterS} s: calls, s to ready`,
    figures
      .filter((figure) => figure.server_ready_after_s === readyAfterS)
      .map((figure) => `${figure.strategy} ${figure.calls}, ${figure.seconds_to_ready} s`)
      .join(" · "),
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pi = await PiRpcHost.start(PI_HOSTS.at(-1)!, { extensions: [EXTENSION_ENTRY], args: ["--keep-builtin-bash"] });
  try {
    const figures = await workflowBenchmark(pi);
    for (const [label, value] of workflowRows(figures)) console.log(`${label}  ${value}`);
  } finally {
    await pi.close(60_000);
  }
}
