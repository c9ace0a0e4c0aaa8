/**
 * `until_pattern` reads a line a program redraws across chunks (a spinner, a progress bar, a prompt
 * drawn over a spinner) as a terminal finally shows it, so an anchored pattern matches the line the
 * model will read, not the frames glued before it. Chunk by chunk on a job's output, no process.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConditionWatch } from "../../../src/core/conditions/condition-watch.ts";
import { compileUntilPattern } from "../../../src/core/conditions/until-pattern.ts";
import { JobOutput } from "../../../src/core/job/job-output.ts";

/** Feeds `chunks` one by one to a job's output watched for `pattern` (after the unfinished line `partial`); the matched line, if any. */
function matchedLine(pattern: string, chunks: string[], partial = ""): string | undefined {
  const output = new JobOutput(performance.now());
  const watch = new ConditionWatch({ pattern: compileUntilPattern(pattern) }, partial, () => {});
  output.startWatch(watch);
  for (const chunk of chunks) output.push(Buffer.from(chunk));
  return watch.outcome?.status === "matched" ? watch.outcome.match.line : undefined;
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
