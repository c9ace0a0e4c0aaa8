/**
 * Jobs for the `input_wait` probe's tests, started by hand outside a runtime (bash on pipes or a PTY,
 * its output rendered as the model reads it), the probe's two checks with a deadline, and the
 * cases a quiet prompt-like line must not fool: shared by the unit tests and their stress runs.
 */
import assert from "node:assert/strict";
import { existsSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { type InputWaitQuery, probeInputWait, readStdinIdentity } from "../../src/core/input-wait/input-wait.ts";
import { childrenOf, type ProcReader, realProcReader } from "../../src/core/input-wait/proc-wait.ts";
import { TerminalText } from "../../src/core/output/terminal-text.ts";
import { INPUT_WAIT_QUIET_MS } from "../../src/core/shared/constants.ts";
import { PipeTransport } from "../../src/core/transport/pipe.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import type { Transport } from "../../src/core/transport/types.ts";
import { StartedJobs } from "./jobs.ts";
import { quietFor, waitFor } from "./processes.ts";

const started = new StartedJobs();

export interface Running {
  transport: Transport;
  /** The job's leader: on a PTY, the wrapper that holds the session and runs bash as its child. */
  pid: number;
  /** The bash that runs the command. */
  shell: number;
  /** The query a result would make now. */
  query(): InputWaitQuery;
  stop(): void;
}

/** Starts `command` under bash on pipes or a PTY, rendering its output as the model would see it. */
export async function run(command: string, tty: boolean): Promise<Running> {
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
  // the runtime takes the slave path from the spawn; here we wait until the leader's stdin shows it
  // (the leader is the wrapper that holds the session: the command, run by its child, cannot redirect it).
  let stdin = tty ? undefined : readStdinIdentity(pid);
  if (tty) {
    await waitFor(() => {
      try {
        stdin = readlinkSync(`/proc/${pid}/fd/0`);
      } catch {
        return false;
      }
      return stdin.startsWith("/dev/pts/");
    }, "the PTY on fd 0");
  }
  let shell = pid;
  if (tty) {
    await waitFor(() => {
      [shell = pid] = childrenOf(pid, [pid], realProcReader);
      return shell !== pid;
    }, "the wrapper's bash");
  }
  return {
    transport,
    pid,
    shell,
    query: () => ({ pid, stdin, tty, lastLine: text.slice(text.lastIndexOf("\n") + 1), quietMs: performance.now() - lastOutput }),
    stop: () => transport.signal("SIGKILL"),
  };
}

/** Waits (with a deadline) until the probe says likely, and returns that answer. */
export async function becomesLikely(job: Running, reader: ProcReader = realProcReader) {
  let answer = probeInputWait(job.query(), reader);
  const probe = () => {
    answer = probeInputWait(job.query(), reader);
    return answer.likely;
  };
  await waitFor(probe, `input_wait: likely for ${JSON.stringify(job.query())}`, 15_000);
  return answer;
}

/** Probes for `ms` (past the prompt rule's quiet time) and fails on any likely answer. */
export async function neverLikely(job: Running, ms = INPUT_WAIT_QUIET_MS + 500) {
  await quietFor(ms, () => {
    const answer = probeInputWait(job.query());
    assert.equal(answer.likely, false, `likely (${answer.reason}) for ${JSON.stringify(job.query())}`);
  });
}

/** A quiet unfinished line ending in `:` while the job only sleeps: no prompt. */
export const QUIET_COLON_LINE = "printf 'Downloading weights (step 1 of 2): '; sleep 7";

/** Starts {@link QUIET_COLON_LINE} and returns it once its line is out. */
export async function quietColonLine(tty: boolean): Promise<Running> {
  const job = await run(QUIET_COLON_LINE, tty);
  await waitFor(() => job.query().lastLine.endsWith(": "), "the line");
  return job;
}

/**
 * A real prompt answered, the program working on silently after it: Python's `input()` on pipes,
 * `read -s` on a PTY (nothing echoed either way, so its last line still looks like a prompt). Returns
 * once the job has read the answer (it touches a file in `dir`).
 */
export async function answeredPrompt(tty: boolean, dir: string): Promise<Running> {
  const answered = join(dir, `answered-${Math.random().toString(36).slice(2)}`);
  const command = tty
    ? `read -s -p 'Password: ' x; touch ${answered}; sleep 30`
    : `python3 -c 'input("Name: "); open("${answered}", "w"); import time; time.sleep(30)'`;
  const prompt = tty ? "Password: " : "Name: ";
  const job = await run(command, tty);
  // The probe may see the read before the prompt's bytes reach us: the answer waits for both.
  await waitFor(() => job.query().lastLine === prompt, "the prompt");
  await becomesLikely(job);
  await job.transport.write(Buffer.from(tty ? "hunter2\r" : "bob\n"));
  await waitFor(() => existsSync(answered), "the answer to be read");
  assert.equal(job.query().lastLine, prompt, "nothing echoed: the line still looks like a prompt");
  return job;
}
