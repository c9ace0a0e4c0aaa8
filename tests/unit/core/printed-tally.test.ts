/**
 * What a job printed for each read (printed-tally.ts through JobOutput and the runtime): bytes and
 * lines counted on the raw bytes as they arrive, the middle retention drops included; the count of
 * a read that ended at a matched line stops there and the rest is the next read's; and how many
 * reads a job has had, which tells its first result. Real jobs through the runtime; the flood 5 times
 * beside CPU burners in `tests/stress/transport.test.ts`.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { newlinesIn, PrintedTally } from "../../../src/core/output/printed-tally.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { runningId } from "../../helpers/reports.ts";
import { seqCountedWhole } from "../../helpers/transports.ts";

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 60_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);

describe("a tally of printed bytes and lines", () => {
  it("counts newlines, and an unfinished last line as one more", () => {
    const tally = new PrintedTally();
    assert.deepEqual(tally.count(), { bytes: 0, lines: 0 });
    tally.add(Buffer.from("a\nb"));
    assert.deepEqual(tally.count(), { bytes: 3, lines: 2 });
    tally.add(Buffer.from("c\n"));
    assert.deepEqual(tally.count(), { bytes: 5, lines: 2 });
    assert.equal(newlinesIn(Buffer.from("\n\nx\n"), 1, 3), 1, "only the range");
  });

  it("JobOutput counts each read on its own, the dropped middle included", () => {
    const output = new JobOutput(performance.now());
    const line = Buffer.from(`${"x".repeat(99)}\n`);
    for (let i = 0; i < 30_000; i++) output.push(line); // 3 MB: retention keeps 1 MiB
    const first = output.take(false);
    assert.ok(first.omittedBytes > 0);
    assert.deepEqual(first.printed, { bytes: 3_000_000, lines: 30_000 });
    output.push(Buffer.from("tail without newline"));
    assert.deepEqual(output.take(false).printed, { bytes: 20, lines: 1 });
    assert.deepEqual(output.take(false).printed, { bytes: 0, lines: 0 }, "nothing new");
    assert.equal(output.reads, 3);
  });
});

describe("printed counts through the runtime", () => {
  const runtime = new ExecRuntime();
  after(() => runtime.shutdown());

  it("seq 1 2000000 in one call: 2 000 000 lines and every byte, though retention kept one MiB", async () => {
    await seqCountedWhole(runtime);
  });

  it("a read that ends at a matched line counts up to it; the next read counts the rest, once", async () => {
    const first = await runtime.exec(exec("printf 'boot\\nready\\nnext one\\nlast'; sleep 30", { until_pattern: "ready" }));
    assert.equal(first.waitEnd, "matched");
    assert.deepEqual(first.output.printed, { bytes: "boot\nready\n".length, lines: 2 });
    const rest = await runtime.interact(write(runningId(first)!, { yield_time_ms: 5_000, until_pattern: "last" }));
    assert.equal(rest.output.text, "next one\nlast");
    assert.deepEqual(rest.output.printed, { bytes: "next one\nlast".length, lines: 2 });
    assert.equal(rest.job.outputReads, 2, "a later result");
    await runtime.kill(runningId(first)!, "SIGKILL");
  });

  it("a match in output already printed: what follows it is left for the next read, dropped middle and all", async () => {
    const started = await runtime.exec(exec("sleep 0.5; echo READY; seq 1 300000; echo END; sleep 30", { yield_time_ms: 250 }));
    const id = runningId(started)!;
    const job = runtime.jobs().find((candidate) => candidate.id === id)!;
    const expected = "READY\n".length + (9 * 2 + 90 * 3 + 900 * 4 + 9_000 * 5 + 90_000 * 6 + 200_001 * 7) + "END\n".length;
    const deadline = performance.now() + 20_000;
    while (job.outputBytesTotal < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const before = started.output.printed!;
    assert.equal(before.bytes, 0, "nothing was read before the match");
    const matched = await runtime.interact(write(id, { yield_time_ms: 5_000, until_pattern: "READY" }));
    const rest = await runtime.interact(write(id, { yield_time_ms: 5_000, until_pattern: "END" }));
    const total = before.bytes + matched.output.printed!.bytes + rest.output.printed!.bytes;
    assert.equal(total, expected, "every byte counted once");
    assert.equal(before.lines + matched.output.printed!.lines + rest.output.printed!.lines, 300_002);
    assert.ok(rest.output.text.endsWith("300000\nEND\n"));
    await runtime.kill(id, "SIGKILL");
  });
});
