/**
 * A transport started by hand (pipes or a real PTY) that records what it reported, and the scenarios
 * of reading output that the unit tests (`transport-contract`, `output-reader`, `pty`, `printed-tally`)
 * run once and `tests/stress/transport.test.ts` many times beside CPU burners. The jobs left are
 * killed after the file's tests.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { PassThrough, Writable } from "node:stream";
import { LogDirectory, logConfig } from "../../src/core/log/job-log.ts";
import { prepareExec } from "../../src/core/request/request.ts";
import { currentShellHost, jobEnvironment, resolveShell } from "../../src/core/request/shell.ts";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { READ_BUFFER_BYTES, READ_TURN_BYTES, ReadBatch, readOutput } from "../../src/core/transport/output-reader.ts";
import { PipeTransport } from "../../src/core/transport/pipe.ts";
import { loadPtyModule, spawnPty } from "../../src/core/transport/pty.ts";
import type { LeaderExit, Transport } from "../../src/core/transport/types.ts";
import { StartedJobs } from "./jobs.ts";
import { waitFor } from "./processes.ts";

const bash = resolveShell("bash", currentShellHost()).path;
// Made when the test file imports this: its `after` belongs to the file.
const leftovers = new StartedJobs();

/** A transport and everything it reported, in order. */
export interface Recorded {
  transport: Transport;
  events: string[];
  output: () => string;
  exit: () => LeaderExit | undefined;
  closed: Promise<void>;
  exited: Promise<void>;
}

export type Kind = "pipe" | "pty";

export function startTransport(kind: Kind, command: string, onData?: (chunk: Buffer) => void): Recorded {
  const chunks: Buffer[] = [];
  const events: string[] = [];
  let exit: LeaderExit | undefined;
  let closedResolve!: () => void;
  let exitedResolve!: () => void;
  const closed = new Promise<void>((resolve) => {
    closedResolve = resolve;
  });
  const exited = new Promise<void>((resolve) => {
    exitedResolve = resolve;
  });
  const handlers = {
    data(chunk: Buffer) {
      chunks.push(Buffer.from(chunk)); // a pipe reuses its read buffer: keep a copy
      if (events.at(-1) !== "data") events.push("data");
      onData?.(chunk);
    },
    exit(leader: LeaderExit) {
      exit = leader;
      events.push("exit");
      exitedResolve();
    },
    closed() {
      events.push("closed");
      closedResolve();
    },
  };
  const spec = { file: bash, args: ["-c", command], cwd: process.cwd(), env: jobEnvironment(process.env, { tty: kind === "pty" }) };
  const transport =
    kind === "pipe" ? new PipeTransport(spec, handlers) : spawnPty({ ...spec, cols: 120, rows: 30 }, handlers, loadPtyModule());
  if (transport.pid) leftovers.group(transport.pid);
  return { transport, events, output: () => Buffer.concat(chunks).toString().replaceAll("\r\n", "\n"), exit: () => exit, closed, exited };
}

/** `exit` exactly once and `closed` exactly once, in that order, with data only before `closed`. */
export function assertOrder(events: string[]): void {
  assert.equal(events.filter((event) => event === "exit").length, 1, events.join(","));
  assert.equal(events.filter((event) => event === "closed").length, 1, events.join(","));
  assert.ok(events.indexOf("exit") < events.indexOf("closed"), events.join(","));
  assert.equal(events.at(-1), "closed", events.join(","));
}

/**
 * A PTY job's last output to a reader that busies the loop 2 ms a chunk: every line arrives, the
 * last one too, in order. `run` names the run in a failure.
 */
export async function slowReaderGetsEveryLine(run = 0): Promise<void> {
  const slow = () => {
    const until = performance.now() + 2;
    while (performance.now() < until);
  };
  const job = startTransport("pty", 'for i in $(seq 1 3000); do echo "line $i of the output that matters"; done', slow);
  await job.closed;
  const lines = job.output().trimEnd().split("\n");
  assert.equal(lines.length, 3000, `run ${run}: ${lines.length} lines, last ${JSON.stringify(lines.at(-1))}`);
  assert.equal(lines.at(-1), "line 3000 of the output that matters", `run ${run}`);
  assertOrder(job.events);
}

/** `cat` on a PTY given a line and Ctrl-D: how its leader's exit was reported. */
export async function ctrlDExit(): Promise<LeaderExit | undefined> {
  const job = startTransport("pty", "exec cat");
  await job.transport.write(Buffer.from("x\n\x04"));
  await job.closed;
  return job.exit();
}

/** One slot per turn of the event loop from now on, the last being the current turn's, until `stop`. */
export function perTurn(): { slots: number[]; stop: () => void } {
  const slots = [0];
  let counting = true;
  const next = () => {
    slots.push(0);
    if (counting) setImmediate(next);
  };
  setImmediate(next);
  return {
    slots,
    stop: () => {
      counting = false;
    },
  };
}

/**
 * A 40 MB flood read through `readOutput` on both paths (Node's socket with the reused buffer, and
 * 'data' events): every byte arrives and no turn of the event loop hands over more than
 * READ_TURN_BYTES and the read in flight.
 */
export async function floodTurns(): Promise<void> {
  for (const path of ["reused buffer", "data events"] as const) {
    const child = spawn("bash", ["-c", "head -c 40000000 /dev/zero"], { stdio: ["ignore", "pipe", "ignore"] });
    // A stream that is not Node's socket takes the 'data' path; the child's pipe feeds it.
    const source = path === "data events" ? child.stdout.pipe(new PassThrough({ highWaterMark: 4 * READ_BUFFER_BYTES })) : child.stdout;
    const { slots: turns, stop: stopCounting } = perTurn();
    let closed = false;
    let bytes = 0;
    const reader = readOutput(
      source,
      new ReadBatch((chunk) => {
        bytes += chunk.length;
        turns[turns.length - 1]! += chunk.length;
      }),
      () => {
        closed = true;
      },
    );
    await waitFor(() => closed, "the flood's end", 60_000);
    stopCounting();
    assert.equal(bytes, 40_000_000, path);
    assert.equal(reader.reusesBuffer, path === "reused buffer");
    const most = Math.max(...turns);
    assert.ok(most <= READ_TURN_BYTES + 4 * READ_BUFFER_BYTES, `${path}: ${most} bytes in one turn`);
  }
}

/**
 * A PTY job printing 3 000 numbered lines through a runtime whose log disk takes a while per write:
 * the job's reading is paused for it, and the result ends at the last line and the log holds every
 * byte. `run` names the run in a failure.
 */
export async function ptyLinesThroughASlowDisk(run = 0): Promise<void> {
  const lines = Array.from({ length: 3000 }, (_, i) => `numbered line ${i + 1} of the output that matters`);
  const expected = Buffer.from(`${lines.join("\r\n")}\r\n`);
  // A disk that takes a while per write: the job's reading is paused for it, and nothing may be lost.
  const written: Buffer[] = [];
  const slowDisk = () =>
    new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        written.push(Buffer.from(chunk)); // a copy: the log reuses its buffers once a write is done
        setTimeout(callback, 1);
      },
    });
  const runtime = new ExecRuntime({ logs: new LogDirectory(logConfig(), slowDisk) });
  const request = prepareExec(
    { cmd: 'for i in $(seq 1 3000); do echo "numbered line $i of the output that matters"; done', tty: true, yield_time_ms: 20_000 },
    process.cwd(),
    process.env,
  );
  const report = await runtime.exec(request);
  assert.equal(report.job.exit?.exitCode, 0, `run ${run}`);
  assert.equal(
    report.output.text.trimEnd().split("\n").at(-1),
    lines.at(-1),
    `run ${run}: the result ends ${JSON.stringify(report.output.text.slice(-60))}`,
  );
  assert.ok(
    Buffer.concat(written).equals(expected),
    `run ${run}: the log holds ${Buffer.concat(written).length} of ${expected.length} bytes`,
  );
  await runtime.shutdown();
}

/** `seq 1 2000000`: 14 888 896 bytes. */
const SEQ_BYTES = 9 * 2 + 90 * 3 + 900 * 4 + 9_000 * 5 + 90_000 * 6 + 900_000 * 7 + 1_000_001 * 8;

/**
 * `seq 1 2000000` in one call through `runtime`: the result counts every line and byte printed,
 * though retention kept one MiB. `run` names the run in a failure.
 */
export async function seqCountedWhole(runtime: ExecRuntime, run = 0): Promise<void> {
  const report = await runtime.exec(prepareExec({ cmd: "seq 1 2000000", yield_time_ms: 60_000 }, process.cwd(), process.env));
  assert.equal(report.job.exit?.exitCode, 0);
  assert.ok(report.output.omittedBytes > 0);
  assert.deepEqual(report.output.printed, { bytes: SEQ_BYTES, lines: 2_000_000 }, `run ${run}`);
  assert.ok(report.output.text.endsWith("1999999\n2000000\n"));
  assert.equal(report.job.outputReads, 1, "the job's first read");
}
