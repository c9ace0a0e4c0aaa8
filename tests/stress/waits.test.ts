/**
 * Waits that end when the work does, beside CPU burners: a matched line splits the output exactly
 * (20 runs), the output after a match while the call still delivers its input is the next read's
 * (pipes and a terminal, 4 rounds), a typed `echo ready` on an interactive bash matches the command's
 * line and never the echo (10 runs), `until_quiet_ms` fires about its window after the last line
 * (3 runs), and `until_listening` returns soon after the bind (5 runs). Once each, without burners:
 * `tests/unit/core/runtime.until.test.ts`, `until-match-cut.test.ts`, `call-wait.test.ts`,
 * `quiet-watch.test.ts`, `runtime.listening.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { TerminalText } from "../../src/core/output/terminal-text.ts";
import { prepareExec, prepareWrite } from "../../src/core/request/request.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { CallWait } from "../../src/core/wait/call-wait.ts";
import { bindLag } from "../helpers/bind-server.ts";
import { StartedJobs } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { matchThenMore } from "../helpers/match-cut.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { echoCase, INTERACTIVE_BASH } from "../helpers/pty-echo.ts";
import { runningId } from "../helpers/reports.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 20_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);
const dir = mkdtempSync(join(tmpdir(), "stress-waits-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("conditional waits under load", () => {
  it("a matched line splits the output exactly: nothing lost, nothing repeated, 20 runs with CPU burners", async () => {
    const stop = startBurners(2);
    const runtime = new ExecRuntime();
    try {
      for (let run = 0; run < 20; run++) {
        const cmd = "seq 1 400; echo MARK; seq 401 800; sleep 30";
        const first = await runtime.exec(exec(cmd, { until_pattern: "^MARK$" }));
        assert.equal(first.waitEnd, "matched", `run ${run}`);
        const rest = await runtime.interact(write(runningId(first)!, { yield_time_ms: 10_000, until_pattern: "^800$" }));
        const all = first.output.text + rest.output.text;
        const expected = `${Array.from({ length: 400 }, (_, i) => i + 1).join("\n")}\nMARK\n${Array.from({ length: 400 }, (_, i) => i + 401).join("\n")}\n`;
        assert.equal(all, expected, `run ${run}`);
        assert.ok(first.output.text.endsWith("MARK\n"), `run ${run}: the first read ends at the match`);
        await runtime.kill(runningId(first)!, "SIGKILL");
      }
    } finally {
      stop();
      await runtime.shutdown();
    }
  });
});

describe("a match while the call still delivers its input, real jobs beside burners", () => {
  for (const tty of [false, true]) {
    const on = tty ? "a terminal" : "pipes";
    const skip = tty ? SKIP_WITHOUT_PTY : false;
    it(`on ${on}: the output after a matched line is the next read's, whenever it arrives (burners)`, { skip }, async () => {
      const stop = startBurners(2);
      try {
        for (let round = 0; round < 4; round++) {
          const complete = await matchThenMore("ready\\n", "next\\n", tty);
          assert.deepEqual(complete, { read: "ready\n", next: "next\n", matched: "ready" }, `round ${round}: a complete line`);
          const unfinished = await matchThenMore("ready", "\\nnext\\n", tty);
          assert.deepEqual(unfinished, { read: "ready\n", next: "next\n", matched: "ready" }, `round ${round}: an unfinished line`);
        }
      } finally {
        stop();
      }
    });
  }
});

describe("PTY echo with real terminals, beside CPU burners", { skip: SKIP_WITHOUT_PTY }, () => {
  const started = new StartedJobs();

  it("interactive bash: typing `echo ready` matches the command's output line, never the echo (10 runs, CPU burners)", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 10; run++) {
        const { match, fed } = await echoCase(started, INTERACTIVE_BASH, "$ ", "echo ready\r", "ready");
        assert.equal(match.line, "ready", `run ${run}: ${JSON.stringify(fed)}`);
        assert.ok(fed.startsWith("echo ready\n"), `the echo came first: ${JSON.stringify(fed)}`);
      }
    } finally {
      stop();
    }
  });
});

describe("until_quiet_ms on a real job (real timers), beside CPU burners", () => {
  it("a job that prints for 2 s then goes quiet fires about quietMs after its last line (3 runs, CPU burners)", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 3; run++) {
        const child = spawn("bash", ["-c", "for i in $(seq 1 10); do echo line $i; sleep 0.2; done; sleep 30"], {
          stdio: ["ignore", "pipe", "ignore"],
        });
        const start = performance.now();
        let lastOutput = 0;
        let lines = "";
        const render = new TerminalText();
        const until = new CallWait({ quietMs: 500 });
        until.begin({ head: Buffer.alloc(0), tail: Buffer.alloc(0), omittedBytes: 0 }, undefined, start);
        child.stdout.on("data", (chunk: Buffer) => {
          lastOutput = performance.now();
          lines += render.write(chunk.toString(), false);
          until.feed(chunk, lastOutput);
        });
        const outcome = { outcome: await until.met, at: performance.now() };
        child.kill("SIGKILL");
        assert.equal(outcome.outcome, "quiet");
        assert.match(lines, /line 10\n$/, `every line was printed before quiet: ${JSON.stringify(lines)}`);
        const after = outcome.at - lastOutput;
        assert.ok(after >= 490 && after < 1_500, `fired ${after.toFixed(0)} ms after the last output`);
        assert.ok(outcome.at - start >= 1_800, "not during the 2 s of printing");
      }
    } finally {
      stop();
    }
  });
});

describe("until_listening beside CPU burners", { skip: process.platform !== "linux" && "reads sockets from /proc (Linux)" }, () => {
  it("returns soon after the bind with two burners running, 5 runs", async () => {
    const stop = startBurners(2);
    const runtime = new ExecRuntime();
    try {
      const lags: number[] = [];
      for (let i = 0; i < 5; i++) lags.push(await bindLag(runtime, join(dir, `bind-${i}`)));
      assert.ok(Math.max(...lags) < 1_000, `lags ${lags.join(", ")} ms`);
    } finally {
      stop();
      await runtime.shutdown();
    }
  });
});
