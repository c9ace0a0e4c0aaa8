/**
 * A call's wait (`until_pattern`) over a job's output as it arrives: which lines are tested, the first
 * match, where the call's read ends, the PTY echo, and lines redrawn across chunks.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { compileUntilPattern, type LinePattern, MATCHED_LINE_CHARS } from "../../../src/core/patterns/line-pattern.ts";
import { LINE_TEST_CHARS } from "../../../src/core/shared/constants.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";
import { EchoFilter, expectedEcho } from "../../../src/core/wait/pty-echo.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { echoCase, INTERACTIVE_BASH, ptyTerminal } from "../../helpers/pty-echo.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A call's wait for `pattern` after the unfinished line `partialLine`, fed text chunk by chunk: each
 * feed returns where the call's read ends in that chunk once a line matched (`cut`), and `offset`
 * counts the same position in all the text fed.
 */
function lineWait(pattern: LinePattern, partialLine = "") {
  const wait = new CallWait({ pattern }, { partialLine });
  let fed = 0;
  let offset: number | undefined;
  return {
    wait,
    feed(text: string): number | undefined {
      const cut = wait.feed(Buffer.from(text), 0);
      if (cut !== undefined) offset ??= fed + cut;
      fed += Buffer.byteLength(text);
      return cut;
    },
    get offset() {
      return offset;
    },
  };
}

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

describe("a call's wait: which lines are tested", () => {
  it("tests each complete line once, and returns the first match only once", () => {
    const { pattern, tested } = recording("ready");
    const { wait, feed } = lineWait(pattern);
    assert.equal(feed("booting\nready 1\nready 2\n"), 16);
    assert.deepEqual(tested, ["booting", "ready 1"]);
    assert.equal(wait.matchedLine(), "ready 1");
    assert.equal(feed("ready 3\n"), 0, "after the match it reads nothing more: the matched line had ended");
    assert.deepEqual(tested, ["booting", "ready 1"]);
    assert.equal(wait.matchedLine(), "ready 1");
  });

  it("tests the unfinished last line, so a prompt without a line break matches", () => {
    const { wait, feed } = lineWait(compileUntilPattern("\\[y/N\\] $"));
    assert.equal(feed("Removing 3 files.\nContinue? [y/N] "), 34);
    assert.equal(wait.matchedLine(), "Continue? [y/N] ");
    assert.equal(feed("y\nnext\n"), 2, "unfinished when it matched: its line end is the read's, nothing after it");
    const sudo = lineWait(compileUntilPattern("(?i)password.*: $"));
    sudo.feed("[sudo] password for me: ");
    assert.equal(sudo.feed("\n"), 1, "unfinished");
  });

  it("a line split across two feeds 300 ms apart still matches once, when it is whole", async () => {
    const { pattern, tested } = recording("server ready$");
    const watch = lineWait(pattern);
    assert.equal(watch.feed("log 1\nserver re"), undefined);
    await sleep(300);
    assert.equal(watch.feed("ady\nlog 2\n"), 4);
    assert.equal(watch.offset, 19);
    assert.equal(watch.wait.matchedLine(), "server ready");
    assert.deepEqual(tested, ["log 1", "server re", "server ready"], "the unfinished part was tested, then the whole line once");
    assert.equal(watch.feed("server ready\n"), 0, "once");
    assert.equal(tested.length, 3);
  });

  it("a line that grows is tested again when it grows, and not when it does not", () => {
    const { pattern, tested } = recording("zzz");
    const { feed } = lineWait(pattern);
    feed("Loading");
    feed("...");
    feed("");
    feed(" done\n");
    assert.deepEqual(tested, ["Loading", "Loading...", "Loading... done"]);
  });

  it("an unfinished line that matched is reported as unfinished even if it is completed later", () => {
    const { wait, feed } = lineWait(compileUntilPattern("Name: "));
    assert.equal(feed("Name: "), 6);
    assert.equal(feed("bob\n"), 4, "its end is the read's");
    assert.equal(wait.matchedLine(), "Name: ");
  });

  it("the rest after the matched line is reported as unread: the cut and the offset cut the fed text exactly", () => {
    const watch = lineWait(compileUntilPattern("^ready$"));
    const chunks = ["one\ntw", "o\nready\nafter 1\n", "after 2\n"];
    watch.feed(chunks[0]!);
    const end = watch.feed(chunks[1]!)!;
    assert.equal(chunks[1]!.slice(0, end), "o\nready\n", "returned by this call, the line's \\n included");
    assert.equal(chunks[1]!.slice(end), "after 1\n", "kept for the next call");
    assert.equal(chunks.join("").slice(0, watch.offset), "one\ntwo\nready\n");
  });

  it("a blank complete line is tested (^$ waits for one), an empty unfinished line is not", () => {
    const { pattern, tested } = recording("^$");
    const { wait, feed } = lineWait(pattern);
    assert.equal(feed("header\n\nbody"), 8);
    assert.equal(wait.matchedLine(), "");
    assert.deepEqual(tested, ["header", ""]);
  });

  it("CRLF line ends are tested without the CR", () => {
    const { wait, feed } = lineWait(compileUntilPattern("ready$"));
    feed("ready\r\n");
    assert.equal(wait.matchedLine(), "ready");
  });

  it("the partial line of output already returned is context for the line it continues, never tested alone", () => {
    const { pattern, tested } = recording("Loading done");
    const { wait, feed } = lineWait(pattern, "Loading");
    assert.equal(feed(""), undefined);
    assert.deepEqual(tested, [], "nothing new: nothing tested");
    feed(" done\n");
    assert.equal(wait.matchedLine(), "Loading done");
  });

  it("matches Unicode lines", () => {
    const first = lineWait(compileUntilPattern("準備完了"));
    first.feed("サーバー 準備");
    assert.equal(first.wait.matchedLine(), undefined);
    const { wait, feed } = lineWait(compileUntilPattern("準備完了 ✅$"));
    feed("サーバー 準備");
    feed("完了 ✅\n");
    assert.equal(wait.matchedLine(), "サーバー 準備完了 ✅");
  });
});

describe("a call's wait: bounded memory and work on huge lines", () => {
  it("keeps only the first and last halves of a line longer than the bound, and tests those", () => {
    const { pattern, tested } = recording("^START|END$");
    const { wait, feed } = lineWait(pattern);
    const chunk = "x".repeat(64 * 1024);
    feed("STAR");
    for (let i = 0; i < 50; i++) feed(chunk);
    for (const line of tested) assert.ok(line.length <= LINE_TEST_CHARS, "no test sees more than the bound");
    assert.ok(feed("END\n") !== undefined, "the tail half still holds the end of the line");
    const line = wait.matchedLine()!;
    assert.ok(line.length <= MATCHED_LINE_CHARS);
    assert.match(line, /END$/);
  });

  it("a 20 MB line fed in one piece costs bounded work", () => {
    const { feed } = lineWait(compileUntilPattern("a[ab]{8}c"));
    // CPU time, not wall time: a busy machine stretches the wall clock, not the work (unbounded work would take minutes).
    const start = process.cpuUsage();
    assert.equal(feed("ab".repeat(10 * 1024 * 1024)), undefined);
    assert.equal(feed("ab".repeat(10 * 1024 * 1024)), undefined);
    const used = process.cpuUsage(start);
    const cpuMs = (used.user + used.system) / 1_000;
    assert.ok(cpuMs < 3_000, `took ${cpuMs.toFixed(0)} ms of CPU`);
  });

  it("a match in the head half of a long line is found when the line crosses the bound in one feed", () => {
    assert.ok(lineWait(compileUntilPattern("^BEGIN")).feed(`BEGIN ${"y".repeat(LINE_TEST_CHARS * 3)}`) !== undefined);
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

  it("in a call's wait, the echo of `echo ready\\r` does not match `ready`, the command's own `ready` line does", () => {
    const { pattern, tested } = recording("ready");
    const watch = lineWait(pattern, "$ ");
    watch.wait.wrote("echo ready\r");
    assert.equal(watch.feed("echo rea"), undefined);
    assert.equal(watch.feed("dy\n"), undefined);
    assert.equal(watch.feed("ready\n$ "), 6);
    assert.equal(watch.offset, 17);
    assert.equal(watch.wait.matchedLine(), "ready");
    assert.deepEqual(tested, ["ready"], "the echoed line got no text of the job's own: never tested");
  });

  it("output that differs from the echo is matched in full (stty -echo)", () => {
    const { wait, feed } = lineWait(compileUntilPattern("got ready"));
    wait.wrote("ready\r");
    feed("got ready\n");
    assert.equal(wait.matchedLine(), "got ready");
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
    const { match } = await echoCase(started, "printf 'type: '; exec cat", "type: ", "ready\r", "^ready$");
    assert.equal(match.line, "ready");
    assert.equal(match.read, "ready\nready\n", "echo, then cat's line: the match ends after the second");
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
    await waitFor(() => spawnSync("pgrep", ["-s", String(transport.pid), "-x", "sleep"]).status === 0, "sleep in the foreground");
    const { pattern, tested } = recording("\\^C|\\$ $");
    const watch = new CallWait({ pattern }, { partialLine: "" });
    watch.wrote("\x03");
    state.watch = watch;
    await transport.write(Buffer.from("\x03"));
    await waitFor(() => state.read !== undefined, `the next prompt in ${JSON.stringify(state.fed)}`);
    assert.ok(state.fed.startsWith("^C"), JSON.stringify(state.fed));
    assert.equal(watch.matchedLine(), "$ ");
    assert.ok(!tested.includes("^C"), `the echo was not tested: ${JSON.stringify(tested)}`);
  });
});

/** Feeds `chunks` one by one to a job's output watched for `pattern` (after the unfinished line `partial`); the matched line, if any. */
function matchedLine(pattern: string, chunks: string[], partial = ""): string | undefined {
  const output = new JobOutput(performance.now());
  const watch = new CallWait({ pattern: compileUntilPattern(pattern) }, { partialLine: partial });
  output.startWatch(watch);
  for (const chunk of chunks) output.push(Buffer.from(chunk));
  return watch.matchedLine();
}

describe("until_pattern on lines redrawn across chunks", () => {
  it("matches npm's result line anchored, after spinner frames each drawn over the last in its own chunk", () => {
    const frames = ["⠋ reify", "\x1b[1G\x1b[0K⠙ reify", "\x1b[1G\x1b[0K⠹ reify", "\x1b[1G\x1b[0K"];
    assert.equal(matchedLine("^added \\d+ packages", [...frames, "added 3 packages in 1s\n"]), "added 3 packages in 1s");
  });

  it("matches a prompt drawn over a spinner before its line ends (npm init's package name)", () => {
    assert.equal(matchedLine("^package name: ", ["⠋ idealTree", "\x1b[G\x1b[2K", "package name: (demo) "]), "package name: (demo) ");
  });

  it("matches a progress bar's final state, redrawn with CR across chunks", () => {
    assert.equal(matchedLine("^progress 100%$", ["progress 10%", "\rprogress 50%", "\rprogress 100%\n"]), "progress 100%");
  });

  it("redraws the line the call began on, which an earlier result showed", () => {
    assert.equal(matchedLine("^ready> $", ["\x1b[1G\x1b[0Kready> "], "⠋ starting"), "ready> ");
    assert.equal(matchedLine("^⠋ starting, ready$", [", ready"], "⠋ starting"), "⠋ starting, ready");
  });

  it("starts from the line the job's last result ended on as a terminal shows it, a spinner frame redrawn by the next read included", () => {
    const output = new JobOutput(performance.now());
    output.push(Buffer.from("⠋ reify"));
    output.take(false);
    output.push(Buffer.from("\x1b[1G\x1b[0K⠙ reify"));
    output.take(false);
    assert.equal(output.lastLine, "⠙ reify", "not the frames glued");
    output.push(Buffer.from("\rprogress"));
    output.take(false);
    assert.equal(output.lastLine, "progress");
    output.push(Buffer.from(" 42%"));
    output.take(false);
    assert.equal(output.lastLine, "progress 42%", "a line that only grows is joined");
  });

  it("leaves a line alone that only grows across chunks: each piece is new text, tested with what came before", () => {
    assert.equal(matchedLine("^abc$", ["a", "b", "c\n"]), "abc");
    assert.equal(matchedLine("^b", ["a", "b", "c\n"]), undefined);
  });
});
