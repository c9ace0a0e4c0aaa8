/** Incremental `until_pattern` matching over rendered output: line rules, the first match, the unread rest, the PTY echo. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { LineWatch } from "../../../src/core/conditions/line-watch.ts";
import { EchoFilter, expectedEcho } from "../../../src/core/conditions/pty-echo.ts";
import { compileUntilPattern, type LinePattern } from "../../../src/core/conditions/until-pattern.ts";
import { LINE_TEST_CHARS, MATCHED_LINE_CHARS } from "../../../src/core/shared/constants.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { echoCase, INTERACTIVE_BASH, ptyTerminal } from "../../helpers/pty-echo.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A pattern that records every line it was asked about. */
function recording(source: string): { pattern: LinePattern; tested: string[] } {
  const real = compileUntilPattern(source);
  const tested: string[] = [];
  return {
    tested,
    pattern: {
      source,
      test: (line) => {
        tested.push(line);
        return real.test(line);
      },
      excerpt: (line) => real.excerpt(line),
    },
  };
}

describe("LineWatch: which lines are tested", () => {
  it("tests each complete line once, and returns the first match only once", () => {
    const { pattern, tested } = recording("ready");
    const watch = new LineWatch(pattern);
    const match = watch.feed("booting\nready 1\nready 2\n");
    assert.deepEqual(tested, ["booting", "ready 1"]);
    assert.deepEqual(match, { line: "ready 1", complete: true, end: 16, offset: 16 });
    assert.equal(watch.feed("ready 3\n"), undefined, "after the match it reads nothing more");
    assert.deepEqual(watch.match, match);
  });

  it("tests the unfinished last line, so a prompt without a line break matches", () => {
    const watch = new LineWatch(compileUntilPattern("\\[y/N\\] $"));
    const match = watch.feed("Removing 3 files.\nContinue? [y/N] ");
    assert.deepEqual(match, { line: "Continue? [y/N] ", complete: false, end: 34, offset: 34 });
    assert.deepEqual(new LineWatch(compileUntilPattern("(?i)password.*: $")).feed("[sudo] password for me: ")?.complete, false);
  });

  it("a line split across two feeds 300 ms apart still matches once, when it is whole", async () => {
    const { pattern, tested } = recording("server ready$");
    const watch = new LineWatch(pattern);
    assert.equal(watch.feed("log 1\nserver re"), undefined);
    await sleep(300);
    const match = watch.feed("ady\nlog 2\n");
    assert.deepEqual(match, { line: "server ready", complete: true, end: 4, offset: 19 });
    assert.deepEqual(tested, ["log 1", "server re", "server ready"], "the unfinished part was tested, then the whole line once");
    assert.equal(watch.feed("server ready\n"), undefined, "once");
  });

  it("a line that grows is tested again when it grows, and not when it does not", () => {
    const { pattern, tested } = recording("zzz");
    const watch = new LineWatch(pattern);
    watch.feed("Loading");
    watch.feed("...");
    watch.feed("");
    watch.feed(" done\n");
    assert.deepEqual(tested, ["Loading", "Loading...", "Loading... done"]);
  });

  it("an unfinished line that matched is reported as unfinished even if it is completed later", () => {
    const watch = new LineWatch(compileUntilPattern("Name: "));
    assert.deepEqual(watch.feed("Name: "), { line: "Name: ", complete: false, end: 6, offset: 6 });
    assert.equal(watch.feed("bob\n"), undefined);
  });

  it("the rest after the matched line is reported as unread: end and offset cut the fed text exactly", () => {
    const watch = new LineWatch(compileUntilPattern("^ready$"));
    const chunks = ["one\ntw", "o\nready\nafter 1\n", "after 2\n"];
    watch.feed(chunks[0]!);
    const match = watch.feed(chunks[1]!)!;
    assert.equal(chunks[1]!.slice(0, match.end), "o\nready\n", "returned by this call, the line's \\n included");
    assert.equal(chunks[1]!.slice(match.end), "after 1\n", "kept for the next call");
    assert.equal(chunks.join("").slice(0, match.offset), "one\ntwo\nready\n");
  });

  it("a blank complete line is tested (^$ waits for one), an empty unfinished line is not", () => {
    const { pattern, tested } = recording("^$");
    const watch = new LineWatch(pattern);
    assert.deepEqual(watch.feed("header\n\nbody"), { line: "", complete: true, end: 8, offset: 8 });
    assert.deepEqual(tested, ["header", ""]);
  });

  it("CRLF line ends are tested without the CR", () => {
    assert.equal(new LineWatch(compileUntilPattern("ready$")).feed("ready\r\n")?.line, "ready");
  });

  it("the partial line of output already returned is context for the line it continues, never tested alone", () => {
    const { pattern, tested } = recording("Loading done");
    const watch = new LineWatch(pattern, { partialLine: "Loading" });
    assert.equal(watch.feed(""), undefined);
    assert.deepEqual(tested, [], "nothing new: nothing tested");
    assert.equal(watch.feed(" done\n")?.line, "Loading done");
  });

  it("matches Unicode lines", () => {
    assert.equal(new LineWatch(compileUntilPattern("準備完了")).feed("サーバー 準備")?.line, undefined);
    const watch = new LineWatch(compileUntilPattern("準備完了 ✅$"));
    watch.feed("サーバー 準備");
    assert.equal(watch.feed("完了 ✅\n")?.line, "サーバー 準備完了 ✅");
  });
});

describe("LineWatch: bounded memory and work on huge lines", () => {
  it("keeps only the first and last halves of a line longer than the bound, and tests those", () => {
    const { pattern, tested } = recording("^START|END$");
    const watch = new LineWatch(pattern);
    const chunk = "x".repeat(64 * 1024);
    watch.feed("STAR");
    for (let i = 0; i < 50; i++) watch.feed(chunk);
    for (const line of tested) assert.ok(line.length <= LINE_TEST_CHARS, "no test sees more than the bound");
    const match = watch.feed("END\n");
    assert.ok(match, "the tail half still holds the end of the line");
    assert.ok(match.line.length <= MATCHED_LINE_CHARS);
    assert.match(match.line, /END$/);
  });

  it("a 20 MB line fed in one piece costs bounded work", () => {
    const watch = new LineWatch(compileUntilPattern("a[ab]{8}c"));
    const start = performance.now();
    assert.equal(watch.feed("ab".repeat(10 * 1024 * 1024)), undefined);
    assert.equal(watch.feed("ab".repeat(10 * 1024 * 1024)), undefined);
    const elapsed = performance.now() - start;
    assert.ok(elapsed < 2_000, `took ${elapsed.toFixed(0)} ms`);
  });

  it("a match in the head half of a long line is found when the line crosses the bound in one feed", () => {
    const watch = new LineWatch(compileUntilPattern("^BEGIN"));
    assert.ok(watch.feed(`BEGIN ${"y".repeat(LINE_TEST_CHARS * 3)}`));
  });
});

describe("PTY echo", () => {
  it("the expected echo: CR as a line break, controls as ^X, stopping where the echo is not predictable", () => {
    assert.equal(expectedEcho("echo ready\r"), "echo ready\n");
    assert.equal(expectedEcho("a\tb\n"), "a\tb\n");
    assert.equal(expectedEcho("\x03"), "^C");
    assert.equal(expectedEcho("abc\x7fd"), "abc", "erase rubs out echo: stop there");
    assert.equal(expectedEcho("x\x04"), "x", "EOF is not echoed");
    assert.equal(expectedEcho("\x1b[A"), "^[[A");
  });

  it("skips only text equal to the expected echo, at the start of the new output", () => {
    const filter = new EchoFilter();
    filter.expect("ls\r");
    assert.equal(filter.take("l"), 1);
    assert.equal(filter.take("s\nfile\n"), 2, "the echo continues across chunks, and ends at its line break");
    assert.equal(filter.take("ls\n"), 0, "after the echo: the job's own output");
    filter.expect("yes\r");
    assert.equal(filter.take("Password: "), 0, "echo off: nothing is skipped");
    assert.equal(filter.take("yes\n"), 0, "a mismatch ends the expectation for good");
  });

  it("with a LineWatch, the echo of `echo ready\\r` does not match `ready`, the command's own `ready` line does", () => {
    const { pattern, tested } = recording("ready");
    const watch = new LineWatch(pattern, { partialLine: "$ " });
    watch.ignoreEcho("echo ready\r");
    assert.equal(watch.feed("echo rea"), undefined);
    assert.equal(watch.feed("dy\n"), undefined);
    const match = watch.feed("ready\n$ ");
    assert.deepEqual(match, { line: "ready", complete: true, end: 6, offset: 17 });
    assert.deepEqual(tested, ["ready"], "the echoed line got no text of the job's own: never tested");
  });

  it("output that differs from the echo is matched in full (stty -echo)", () => {
    const watch = new LineWatch(compileUntilPattern("got ready"));
    watch.ignoreEcho("ready\r");
    assert.equal(watch.feed("got ready\n")?.line, "got ready");
  });
});

describe("PTY echo with real terminals", { skip: SKIP_WITHOUT_PTY }, () => {
  const started = new StartedJobs();

  it("interactive bash: typing `echo ready` matches the command's output line, never the echo", async () => {
    const { match, fed } = await echoCase(started, INTERACTIVE_BASH, "$ ", "echo ready\r", "ready");
    assert.equal(match.line, "ready", JSON.stringify(fed));
    assert.ok(fed.startsWith("echo ready\n"), `the echo came first: ${JSON.stringify(fed)}`);
  });

  it("a canonical-mode reader (cat): the kernel's echo is skipped, cat's copy of the line matches", async () => {
    const { match, fed } = await echoCase(started, "printf 'type: '; exec cat", "type: ", "ready\r", "^ready$");
    assert.equal(match.line, "ready");
    assert.equal(fed.slice(0, match.offset), "ready\nready\n", "echo, then cat's line: the match ends after the second");
  });

  it("with echo off (stty -echo) the program's answer is matched, nothing is skipped", async () => {
    const { match } = await echoCase(started, "stty -echo; printf 'Name: '; read x; echo \"hello $x\"", "Name: ", "bob\r", "bob");
    assert.equal(match.line, "Name: hello bob", "no echoed line break: the answer continues the prompt's line");
  });

  it("the ^C echo of Ctrl-C is skipped, the prompt that follows is matched", async () => {
    const { state, transport } = ptyTerminal(started, INTERACTIVE_BASH);
    await waitFor(() => state.text.endsWith("$ "), "the prompt");
    await transport.write(Buffer.from("sleep 30\r"));
    await waitFor(() => state.text.endsWith("sleep 30\n"), "the command's echo");
    // A Ctrl-C before bash has started sleep in the foreground may be lost to bash's own handling.
    await waitFor(() => spawnSync("pgrep", ["-P", String(transport.pid), "-x", "sleep"]).status === 0, "sleep in the foreground");
    const { pattern, tested } = recording("\\^C|\\$ $");
    const watch = new LineWatch(pattern, { partialLine: "" });
    watch.ignoreEcho("\x03");
    state.watch = watch;
    await transport.write(Buffer.from("\x03"));
    await waitFor(() => watch.match !== undefined, `the next prompt in ${JSON.stringify(state.fed)}`);
    assert.ok(state.fed.startsWith("^C"), JSON.stringify(state.fed));
    assert.equal(watch.match!.line, "$ ");
    assert.ok(!tested.includes("^C"), `the echo was not tested: ${JSON.stringify(tested)}`);
  });
});
