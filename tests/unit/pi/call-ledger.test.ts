import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExecRuntime } from "../../../src/core/runtime.ts";
import { CallLedger } from "../../../src/pi/call-ledger.ts";
import { wakeText } from "../../../src/pi/wake-message.ts";

describe("call ledger", () => {
  it("finds the outermost call through any depth of nesting", () => {
    const ledger = new CallLedger(() => undefined);
    ledger.started("outer", undefined);
    ledger.started("middle", "outer");
    ledger.started("inner", "middle");
    assert.equal(ledger.rootOf("inner"), "outer");
    assert.equal(ledger.isNested("inner"), true);
    assert.equal(ledger.isNested("outer"), false);
  });

  it("moves nested observations to the outermost call, which commits them at its end", () => {
    const runtime = new ExecRuntime();
    const ledger = new CallLedger(() => runtime);
    runtime.completion.arm(7);
    ledger.started("outer", undefined);
    ledger.started("inner", "outer");
    runtime.completion.observed("inner", 7);
    ledger.observed("inner", { tool: "write_stdin", sessionId: 7, exitCode: 0, signal: null });
    ledger.ended("inner", false);
    assert.equal(runtime.completion.isArmed(7), true, "not consumed before the outer call ends");
    assert.match(
      ledger.takeReceipt("outer") ?? "",
      /1 job exit reported inside this call[\s\S]*- session 7: exit_code 0, seen by write_stdin/,
    );
    ledger.ended("outer", false);
    assert.equal(runtime.completion.isArmed(7), false);
    assert.equal(ledger.takeReceipt("outer"), undefined);
  });

  it("keeps at most 64 exits per receipt and names at most 16, counting the rest", () => {
    const ledger = new CallLedger(() => undefined);
    ledger.started("outer", undefined);
    for (let id = 1; id <= 70; id++) {
      ledger.started(`inner-${id}`, "outer");
      ledger.observed(`inner-${id}`, { tool: "write_stdin", sessionId: id, exitCode: 0, signal: null });
      ledger.ended(`inner-${id}`, false);
    }
    const receipt = ledger.takeReceipt("outer")!;
    assert.match(receipt, /^\[unified-exec receipt: 70 job exits reported inside this call/);
    assert.equal(receipt.split("\n").filter((line) => line.startsWith("- session")).length, 16);
    assert.match(receipt, /- session 70:/, "the latest are named");
    assert.match(receipt, /- and 54 more \(list_sessions shows the jobs still known\)$/);
  });
});

describe("wake prompt", () => {
  it("names each job with bounded metadata and counts the rest", () => {
    const text = wakeText({
      jobs: [
        { sessionId: 3, command: "npm test\n  --ci", cwd: "/w", exitCode: 1, signal: null, elapsedMs: 12_345, logPath: "/l/3.log" },
        {
          sessionId: 4,
          command: "make",
          cwd: "/w",
          exitCode: 143,
          signal: "SIGTERM",
          elapsedMs: 1_800_000,
          logPath: "/l/4.log",
          reason: "stopped at its timeout_s deadline",
        },
      ],
      more: 2,
    });
    assert.match(text, /^\[unified-exec\] 4 background jobs you asked to be woken for have exited:\n/);
    assert.match(text, /- session 3 · exit_code 1 · ran 12\.3s · cwd \/w · log \/l\/3\.log · `npm test\\n {2}--ci`/);
    assert.match(text, /- session 4 · exit_code 143 \(SIGTERM\) · ran 1800\.0s · stopped at its timeout_s deadline · /);
    assert.match(text, /- and 2 more \(list_sessions shows them\)/);
    assert.match(text, /Continue only with work that is still relevant/);
  });
});
