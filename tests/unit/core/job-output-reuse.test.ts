/**
 * A pipe hands each chunk as a view of one buffer it reuses for the next read, so whatever the job's
 * output keeps must be a copy: retention, the preview, and the output held back after a matched line
 * for the next read. Fed here from one buffer overwritten after every push, as the reader does.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JobOutput } from "../../../src/core/job/job-output.ts";
import { compileUntilPattern } from "../../../src/core/patterns/line-pattern.ts";
import { CallWait } from "../../../src/core/wait/call-wait.ts";

/** Pushes `text` through one reused buffer, clobbering it after the push as the next read would. */
function pushReused(output: JobOutput, shared: Buffer, text: string): void {
  const length = shared.write(text);
  output.push(shared.subarray(0, length));
  shared.fill(0x58);
}

describe("job output fed from a reused read buffer", () => {
  it("keeps its own copy of retained output, the preview, and what follows a matched line", () => {
    const output = new JobOutput(performance.now());
    const shared = Buffer.alloc(1024);
    const wait = new CallWait({ pattern: compileUntilPattern("^ready$") });
    output.startWatch(wait);
    pushReused(output, shared, "booting\nready\nafter the match\n");
    assert.equal(wait.end, "matched");
    pushReused(output, shared, "more after it\n");
    pushReused(output, shared, "and more\n");
    assert.match(output.previewText(), /and more\n$/);
    assert.equal(output.take(false).text, "booting\nready\n");
    assert.equal(output.take(false).text, "after the match\nmore after it\nand more\n");
  });
});
