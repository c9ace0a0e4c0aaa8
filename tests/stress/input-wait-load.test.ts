/**
 * `input_wait` beside CPU burners, 5 runs of each case: a Python `input()` becomes likely and
 * `sleep 5 | cat` never does, on pipes and on a PTY at once. Without burners:
 * `tests/unit/core/input-wait.test.ts` (whose job helpers these are).
 */
import assert from "node:assert/strict";
import { readlinkSync } from "node:fs";
import { describe, it } from "node:test";
import { type InputWaitQuery, probeInputWait, readStdinIdentity } from "../../src/core/conditions/input-wait.ts";
import { type ProcReader, realProcReader } from "../../src/core/conditions/proc-wait.ts";
import { TerminalText } from "../../src/core/output/terminal-text.ts";
import { INPUT_WAIT_QUIET_MS } from "../../src/core/shared/constants.ts";
import { PipeTransport } from "../../src/core/transport/pipe.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import type { Transport } from "../../src/core/transport/types.ts";
import { StartedJobs } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { quietFor, waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";

const LINUX = process.platform === "linux";
const started = new StartedJobs();

interface Running {
  transport: Transport;
  pid: number;
  /** The query a result would make now. */
  query(): InputWaitQuery;
  stop(): void;
}

/** Starts `command` under bash on pipes or a PTY, rendering its output as the model would see it. */
async function run(command: string, tty: boolean): Promise<Running> {
  let text = "";
  let lastOutput = performance.now();
  const render = new TerminalText();
  const events = {
    data: (chunk: Buffer) => {
      text += render.write(chunk.toString("utf8"), false);
      lastOutput = performance.now();
    },
    exit: () => {},
    closed: () => {},
  };
  const spec = {
    file: "/bin/bash",
    args: ["--norc", "--noprofile", "-c", command],
    cwd: "/tmp",
    env: { ...process.env, TERM: "xterm-256color" },
  };
  const transport = tty ? spawnPty({ ...spec, cols: 100, rows: 30 }, events, loadPtyModule()) : new PipeTransport(spec, events);
  started.transport(transport);
  const pid = transport.pid!;
  // Pipes: the leader's fd 0 is set before spawn returns. A PTY's child sets it up after the fork, so
  // the runtime takes the slave path from the spawn; here we wait until the leader's stderr shows it
  // (its stdin may be redirected by the command itself, as `read </dev/tty` does).
  let stdin = tty ? undefined : readStdinIdentity(pid);
  if (tty) {
    await waitFor(() => {
      try {
        stdin = readlinkSync(`/proc/${pid}/fd/2`);
      } catch {
        return false;
      }
      return stdin.startsWith("/dev/pts/");
    }, "the PTY on fd 0");
  }
  return {
    transport,
    pid,
    query: () => ({ pid, stdin, tty, lastLine: text.slice(text.lastIndexOf("\n") + 1), quietMs: performance.now() - lastOutput }),
    stop: () => transport.signal("SIGKILL"),
  };
}

/** Waits (with a deadline) until the probe says likely, and returns that answer. */
async function becomesLikely(job: Running, reader: ProcReader = realProcReader) {
  let answer = probeInputWait(job.query(), reader);
  const probe = () => {
    answer = probeInputWait(job.query(), reader);
    return answer.likely;
  };
  await waitFor(probe, `input_wait: likely for ${JSON.stringify(job.query())}`, 15_000);
  return answer;
}

/** Probes for `ms` (past the prompt rule's quiet time) and fails on any likely answer. */
async function neverLikely(job: Running, ms = INPUT_WAIT_QUIET_MS + 500) {
  await quietFor(ms, () => {
    const answer = probeInputWait(job.query());
    assert.equal(answer.likely, false, `likely (${answer.reason}) for ${JSON.stringify(job.query())}`);
  });
}

describe("input_wait under load", { skip: !LINUX ? "Linux only" : SKIP_WITHOUT_PTY }, () => {
  it("answers the same with CPU burners beside it (5 runs of each case)", async () => {
    const stop = startBurners(2);
    try {
      for (let runNo = 0; runNo < 5; runNo++) {
        // The pipe and the PTY case at once: separate jobs, each probed on its own.
        await Promise.all(
          [false, true].map(async (tty) => {
            const waiting = await run(`python3 -c 'input("x? ")'`, tty);
            assert.equal((await becomesLikely(waiting)).likely, true);
            waiting.stop();
            const busy = await run("sleep 5 | cat", tty);
            await neverLikely(busy, 600);
            busy.stop();
          }),
        );
      }
    } finally {
      stop();
    }
  });
});
