/**
 * A satisfied `until_pattern` returns the output up to and including the matched line, and nothing
 * after it, even when more output arrives between the match and the read: the call may still be
 * delivering its input (a large write waits for the job to read it), and a terminal hands a line, its
 * line end and the next prompt over in separate reads. The interleavings are forced: chunk by chunk
 * on a job's output, then with real jobs whose output is released by the test only once the runtime
 * holds the match (repeated beside CPU burners in `tests/stress/waits.test.ts`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";
import { matchThenMore } from "../../helpers/match-cut.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";

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

describe("a match while the call still delivers its input, real jobs", () => {
  for (const tty of [false, true]) {
    const on = tty ? "a terminal" : "pipes";
    it(`on ${on}: the output after a matched line is the next read's, whenever it arrives`, { skip: tty && SKIP_WITHOUT_PTY }, async () => {
      const complete = await matchThenMore("ready\\n", "next\\n", tty);
      assert.deepEqual(complete, { read: "ready\n", next: "next\n", matched: "ready" }, "a complete line");
      const unfinished = await matchThenMore("ready", "\\nnext\\n", tty);
      assert.deepEqual(unfinished, { read: "ready\n", next: "next\n", matched: "ready" }, "an unfinished line");
    });
  }
});
