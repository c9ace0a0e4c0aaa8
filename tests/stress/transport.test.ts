/**
 * Transports and output reading beside CPU burners, many times over: every byte of a PTY job's last
 * output to a slow reader (30 runs) and a Ctrl-D exit with its real status, never SIGHUP (100 runs);
 * `seq 1 2000000` read whole and in order (3 runs), and a 40 MB flood handed over at most
 * READ_TURN_BYTES a turn; a PTY Ctrl-C reported as written (15 runs), and the last of 3 000 lines
 * in the result and the log through a slow disk (30 runs); `seq 1 2000000` counted whole in one call
 * though retention kept one MiB (5 runs). Without burners: `tests/unit/core/transport-contract.test.ts` and
 * `output-reader.test.ts`, `pty.test.ts`, `printed-tally.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, it } from "node:test";
import { ExecRuntime } from "../../src/core/runtime.ts";
import { ReadBatch, readOutput } from "../../src/core/transport/output-reader.ts";
import { ptyJobs, StartedJobs, untilExit } from "../helpers/jobs.ts";
import { startBurners } from "../helpers/load.ts";
import { waitFor } from "../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../helpers/pty.ts";
import { ctrlDExit, floodTurns, ptyLinesThroughASlowDisk, seqCountedWhole, slowReaderGetsEveryLine } from "../helpers/transports.ts";

describe("PTY transport under load", { skip: SKIP_WITHOUT_PTY }, () => {
  it("delivers every byte of a job's last output to a slow reader, 30 runs with CPU burners beside it", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 30; run++) await slowReaderGetsEveryLine(run);
    } finally {
      stop();
    }
  });

  it("reports a leader that ends on Ctrl-D with its real status, never SIGHUP: 100 runs with CPU burners", async () => {
    const stop = startBurners(2);
    try {
      const hangups: number[] = [];
      for (let run = 0; run < 100; run++) {
        const exit = await ctrlDExit();
        if (exit?.signal === "SIGHUP") hangups.push(run);
        else assert.deepEqual(exit, { code: 0, signal: null }, `run ${run}`);
      }
      assert.deepEqual(hangups, [], "runs reported as killed by SIGHUP");
    } finally {
      stop();
    }
  });
});

describe("reading output under load", () => {
  it("reads a flood completely beside CPU burners, the bytes in order", async () => {
    const stop = startBurners(2);
    try {
      for (let round = 0; round < 3; round++) {
        const child = spawn("bash", ["-c", "seq 1 2000000"], { stdio: ["ignore", "pipe", "ignore"] });
        const parts: Buffer[] = [];
        let closed = 0;
        readOutput(child.stdout, new ReadBatch((chunk) => parts.push(Buffer.from(chunk))), () => closed++);
        await waitFor(() => closed === 1, "the end of seq", 60_000);
        const text = Buffer.concat(parts).toString();
        const lines = text.trimEnd().split("\n");
        assert.equal(lines.length, 2_000_000);
        assert.equal(lines[0], "1");
        assert.equal(lines[1_999_999], "2000000");
        assert.equal(lines[123_456], "123457");
      }
    } finally {
      stop();
    }
  });

  it("hands over at most READ_TURN_BYTES per turn of the event loop, every byte in the end (both paths, beside CPU burners)", async () => {
    const stop = startBurners(2);
    try {
      await floodTurns();
    } finally {
      stop();
    }
  });
});

describe("PTY jobs under load", { skip: SKIP_WITHOUT_PTY }, () => {
  const { start: startPty, seen } = ptyJobs(new StartedJobs());
  const soon = () => performance.now() + 15_000;

  it("a Ctrl-C that ends the job is reported as written, never as failed: 15 runs beside CPU burners", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 15; run++) {
        const job = startPty("echo ready; sleep 30");
        await waitFor(() => seen(job).includes("ready"), "ready");
        // The job may be gone before the write's own callback: those bytes still reached it.
        assert.deepEqual(await job.send({ kind: "interrupt" }, soon()), { input: "bytes", sentBytes: 1 }, `run ${run}`);
        await untilExit(job);
      }
    } finally {
      stop();
    }
  });

  it("the last numbered line is in the result and in the log, byte for byte: 30 runs with CPU burners and a slow disk", async () => {
    const stop = startBurners(2);
    try {
      for (let run = 0; run < 30; run++) await ptyLinesThroughASlowDisk(run);
    } finally {
      stop();
    }
  });
});

describe("printed counts through the runtime, beside CPU burners", () => {
  const runtime = new ExecRuntime();
  after(() => runtime.shutdown());

  it("seq 1 2000000 in one call: 2 000 000 lines and every byte, though retention kept one MiB (5 runs, CPU burners beside)", async () => {
    const stopBurners = startBurners(2);
    try {
      for (let run = 0; run < 5; run++) await seqCountedWhole(runtime, run);
    } finally {
      stopBurners();
    }
  });
});
