/**
 * A satisfied `until_pattern` returns the output up to and including the matched line, and nothing
 * after it, even when more output arrives between the match and the read: the call may still be
 * delivering its input (a large write waits for the job to read it), and a terminal hands a line, its
 * line end and the next prompt over in separate reads. The interleavings are forced: chunk by chunk
 * on a job's output, then with real jobs whose output is released by the test only once the runtime
 * holds the match, repeated beside CPU burners.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";
import { rounds, startBurners } from "../../helpers/load.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";

/** A job's output watching for `pattern`, and whether the watch was met. */
function watched(pattern: string): { output: JobOutput; met: () => boolean } {
  const output = new JobOutput(performance.now());
  const wait = new CallWait({ pattern: compileUntilPattern(pattern) });
  output.startWatch(wait);
  return { output, met: () => wait.end === "matched" };
}

describe("output arriving between a match and the read, chunk by chunk", () => {
  it("a chunk ending with the matched line: the next chunk (the prompt) is the next read's", () => {
    const { output, met } = watched("^ready$");
    output.push(Buffer.from("echo ready\r\nready\r\n"));
    assert.equal(met(), true);
    output.push(Buffer.from("$ "));
    assert.equal(output.take(false).text, "echo ready\nready\n");
    assert.equal(output.take(false).text, "$ ");
  });

  it("an unfinished line that matched takes its own line end when it comes, and nothing after it", () => {
    const { output, met } = watched("ready");
    output.push(Buffer.from("ready"));
    assert.equal(met(), true, "the unfinished line matches at once");
    output.push(Buffer.from("\r\n$ "));
    output.push(Buffer.from("more\n"));
    assert.equal(output.take(false).text, "ready\n");
    assert.equal(output.take(false).text, "$ more\n");
  });

  it("the rest of an unfinished matched line may come in several chunks", () => {
    const { output } = watched("ready");
    output.push(Buffer.from("ready"));
    output.push(Buffer.from(" on :80"));
    output.push(Buffer.from("80"));
    output.push(Buffer.from("\nnext\n"));
    assert.equal(output.take(false).text, "ready on :8080\n");
    assert.equal(output.take(false).text, "next\n");
  });

  it("a match on the output the call began with holds back what arrives later too", () => {
    const output = new JobOutput(performance.now());
    output.push(Buffer.from("booting\nready"));
    output.startWatch(new CallWait({ pattern: compileUntilPattern("ready") }));
    output.push(Buffer.from("\n$ "));
    assert.equal(output.take(false).text, "booting\nready\n");
    assert.equal(output.take(false).text, "$ ");
  });

  it("a read taken before the matched line ends returns it unfinished; the next read starts with its end", () => {
    const { output } = watched("ready");
    output.push(Buffer.from("ready"));
    assert.equal(output.take(false).text, "ready");
    output.push(Buffer.from("\n$ "));
    assert.equal(output.take(false).text, "\n$ ");
  });
});

const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, yield_time_ms: 20_000, ...extra }, process.cwd(), process.env);
const write = (jobId: number, extra: Record<string, unknown> = {}) => prepareWrite({ session_id: jobId, ...extra }, process.env);

/**
 * The job prints `first` once it read the call's first line, then `second` when the test creates
 * `gate1`, then reads the rest of the call's input only when the test creates `gate2`: the call's
 * input (larger than a pipe or terminal holds) is delivered only then, and its read comes after.
 */
function gatedJob(dir: string, first: string, second: string, tty: boolean): string {
  const gate = (name: string) => `while [ ! -e '${join(dir, name)}' ]; do sleep 0.02; done`;
  // On a terminal: no echo of the input (the output stays exact) and no line editing (a line of
  // any length is read).
  const setup = tty ? "stty -echo -icanon; " : "";
  return `${setup}echo waiting; read -r go; printf '${first}'; ${gate("gate1")}; printf '${second}'; ${gate("gate2")}; exec cat >/dev/null`;
}

/** One forced interleaving: the match arrives while the call's input is still being delivered, then more output. */
async function matchThenMore(
  first: string,
  second: string,
  tty: boolean,
): Promise<{ read: string; next: string; matched: string | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), "until-cut-"));
  const runtime = new ExecRuntime();
  try {
    const started = await runtime.exec(exec(gatedJob(dir, first, second, tty), { tty, until_pattern: "^waiting$" }));
    const id = runningId(started)!;
    const job = runtime.jobs().find((candidate) => candidate.id === id)!;
    const input = `go\\n${"x".repeat(200_000)}`;
    const call = runtime.interact(write(id, { chars: input, yield_time_ms: 60_000, until_pattern: "ready" }));
    await waitFor(() => job.previewText().includes("ready"), "the matching output", 30_000);
    writeFileSync(join(dir, "gate1"), "");
    await waitFor(() => job.previewText().includes("next"), "the output after it", 30_000);
    writeFileSync(join(dir, "gate2"), "");
    const report = await call;
    assert.equal(report.waitEnd, "matched");
    const rest = await runtime.interact(write(id, { yield_time_ms: 20_000, until_pattern: "next" }));
    return { read: report.output.text, next: rest.output.text, matched: report.matchedLine };
  } finally {
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("a match while the call still delivers its input, real jobs beside burners", () => {
  for (const tty of [false, true]) {
    const on = tty ? "a terminal" : "pipes";
    const skip = tty ? SKIP_WITHOUT_PTY : false;
    it(`on ${on}: the output after a matched line is the next read's, whenever it arrives (burners)`, { skip }, async () => {
      const stop = startBurners(2);
      try {
        for (let round = 0; round < rounds(4, 1); round++) {
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
