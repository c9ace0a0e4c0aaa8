/**
 * Guidance just in time (guidance/hints.ts, guidance/job-hints.ts): which result earns which line,
 * once per job or once per session, and that a result with nothing to say carries no `hint:`. The
 * line is in the text (our format and Codex's) and in `details`, never in `structuredContent`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobReport } from "../../../src/core/job/job-snapshot.ts";
import { HintLedger, type HintRule, hintLedger } from "../../../src/pi/guidance/hints.ts";
import { JOB_HINTS, jobHint } from "../../../src/pi/guidance/job-hints.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { jobReport, type ReportParts } from "../../helpers/reports.ts";

const running = (over: ReportParts = {}): JobReport =>
  jobReport({ job: { jobId: 3, command: "./install.sh", cwd: "/work", tty: false }, waitEnd: "deadline", output: { text: "" } }, over);

const waiting = (over: ReportParts = {}, promptShown = false): JobReport =>
  running({ inputWait: { likely: true, reason: "syscall", pid: 10, promptShown }, ...over });

const PLAIN = { plainPoll: false };
const POLL = { plainPoll: true };

describe("hints: guidance in the result that needs it, once", () => {
  it("input_wait: likely says how to answer, once per job; a new job is told again", () => {
    const ledger = new HintLedger();
    const first = ledger.take(JOB_HINTS, waiting({}, true), PLAIN);
    assert.match(first ?? "", /the job waits for input: answer with chars, pass ask_user .*kill_session/);
    assert.equal(ledger.take(JOB_HINTS, waiting({}, true), PLAIN), undefined, "the same job is not told twice");
    const other = waiting({ job: { jobId: 4 } }, true);
    assert.match(ledger.take(JOB_HINTS, other, PLAIN) ?? "", /the job waits for input/);
  });

  it("input_wait: secret says to ask the person with ask_user instead of how to answer, once per job", () => {
    const ledger = new HintLedger();
    const secret = running({
      job: { jobId: 3, tty: true },
      inputWait: { likely: true, reason: "syscall", pid: 10, promptShown: true, secret: true },
    });
    const told = ledger.take(JOB_HINTS, secret, PLAIN) ?? "";
    assert.match(told, /the job asks for a secret: ask the person with write_stdin ask_user; text you write into it is refused/);
    assert.doesNotMatch(told, /answer with chars/);
    assert.equal(ledger.take(JOB_HINTS, secret, PLAIN), undefined, "once per job");
    assert.match(
      jobResult(secret).content[0]!.type === "text" ? (jobResult(secret).content[0] as { text: string }).text : "",
      /^input_wait: secret$/m,
    );
  });

  it("a pipe job waiting with no prompt shown is told to use tty: true; a tty job, a shown prompt or a prompt signal is not", () => {
    const told = new HintLedger().take(JOB_HINTS, waiting(), PLAIN) ?? "";
    assert.match(told, /a program may print its prompt only to a terminal: run it with tty: true/);
    assert.match(told, /the job waits for input/, "both lines, in one hint");
    const tty = new HintLedger().take(JOB_HINTS, waiting({ job: { jobId: 3, tty: true } }), PLAIN) ?? "";
    assert.doesNotMatch(tty, /tty: true/);
    assert.doesNotMatch(new HintLedger().take(JOB_HINTS, waiting({}, true), PLAIN) ?? "", /tty: true/);
    const byPrompt = running({ inputWait: { likely: true, reason: "prompt", promptShown: true } });
    assert.doesNotMatch(new HintLedger().take(JOB_HINTS, byPrompt, PLAIN) ?? "", /tty: true/);
  });

  it("user_typing says to poll and not write, once per session, and replaces the input line meanwhile", () => {
    const ledger = new HintLedger();
    const typing = waiting({ job: { jobId: 3, userTyping: true } }, true);
    const first = ledger.take(JOB_HINTS, typing, PLAIN) ?? "";
    assert.match(first, /the user is typing into this job: poll it; do not write to it or kill it/);
    assert.doesNotMatch(first, /waits for input/, "while the user types, the model is not told to answer");
    assert.doesNotMatch(ledger.take(JOB_HINTS, running({ job: { jobId: 9, userTyping: true } }), PLAIN) ?? "", /typing/);
  });

  it("the first result showing what a shell left running says & was not needed, once per session; an ended job is not told", () => {
    const ledger = new HintLedger();
    const background = { pids: [4242], named: [{ pid: 4242, command: "python3 -m http.server" }] };
    const kept = running({ job: { jobId: 3, background } });
    assert.match(ledger.take(JOB_HINTS, kept, PLAIN) ?? "", /no & needed: .*session_id.*kill_session/);
    assert.equal(ledger.take(JOB_HINTS, running({ job: { jobId: 4, background } }), PLAIN), undefined, "said once");
    assert.equal(new HintLedger().take(JOB_HINTS, running(), PLAIN), undefined, "no background, no line");
  });

  it("a second plain poll in a row on a running job names the waits that replace polling, once per session", () => {
    const ledger = new HintLedger();
    assert.equal(ledger.take(JOB_HINTS, running(), POLL), undefined, "one poll is fine");
    const second = ledger.take(JOB_HINTS, running(), POLL) ?? "";
    assert.match(second, /until_pattern .*until_quiet_ms .*on_exit: "wake"/);
    assert.equal(ledger.take(JOB_HINTS, running(), POLL), undefined, "said once");
    const fresh = new HintLedger();
    fresh.take(JOB_HINTS, running(), POLL);
    fresh.take(JOB_HINTS, running(), PLAIN);
    assert.equal(fresh.take(JOB_HINTS, running(), POLL), undefined, "a call that is not a plain poll ends the run");
    const two = new HintLedger();
    two.take(JOB_HINTS, running(), POLL);
    assert.equal(two.take(JOB_HINTS, running({ job: { jobId: 5 } }), POLL), undefined, "polls of another job do not count");
    const exited = new HintLedger();
    exited.take(JOB_HINTS, running(), POLL);
    assert.equal(exited.take(JOB_HINTS, running({ job: { jobId: 3, exit: { exitCode: 0, signal: null } } }), POLL), undefined);
  });

  it("the first screen result says how to send keys, once per session", () => {
    const ledger = new HintLedger();
    const screen = running({
      job: { jobId: 3, tty: true },
      screen: { lines: ["~"], cursor: { row: 1, col: 1 }, alternate: true, repainting: false, cols: 80, rows: 24 },
    });
    assert.match(ledger.take(JOB_HINTS, screen, PLAIN) ?? "", /send keys with write_stdin chars \(\\e Esc, \\r Enter/);
    assert.equal(ledger.take(JOB_HINTS, { ...screen, job: { ...screen.job, jobId: 8 } }, PLAIN), undefined);
  });

  it("a result with nothing to say has no hint", () => {
    const ledger = new HintLedger();
    for (const report of [running(), running({ job: { jobId: 3, exit: { exitCode: 0, signal: null } }, waitEnd: "exited" })]) {
      assert.equal(ledger.take(JOB_HINTS, report, PLAIN), undefined);
      assert.doesNotMatch((jobResult(report).content[0] as { text: string }).text, /hint:/);
    }
  });

  it("a concern adds its own rule; sessions are told apart by their runtime", () => {
    const rule: HintRule = { id: "custom", once: "job", applies: ({ report }) => report.job.command === "x", text: "custom line" };
    const ledger = new HintLedger();
    assert.equal(ledger.take([rule], running({ job: { jobId: 1, command: "x" } }), PLAIN), "custom line");
    assert.equal(ledger.take([rule], running({ job: { jobId: 1, command: "x" } }), PLAIN), undefined);
    const [a, b] = [{}, {}];
    assert.equal(hintLedger(a), hintLedger(a));
    assert.notEqual(hintLedger(a), hintLedger(b));
    assert.match(jobHint(a, waiting({}, true), PLAIN) ?? "", /waits for input/);
    assert.equal(jobHint(a, waiting({}, true), PLAIN), undefined);
    assert.match(jobHint(b, waiting({}, true), PLAIN) ?? "", /waits for input/, "another session is told on its own");
  });

  it("the hint is the header's last line and in details, not in structuredContent; Codex's text carries it as a note", () => {
    const hint = "the job waits for input: answer it";
    const result = jobResult(waiting({}, true), { hint });
    const text = (result.content[0] as { text: string }).text;
    assert.match(text, /input_wait: likely\nhint: the job waits for input: answer it\n---\n/);
    assert.equal(result.details.hint, hint);
    assert.equal((result.structuredContent as Record<string, unknown>).hint, undefined);
    const codex = (jobResult(waiting({}, true), { hint, format: "codex" }).content[0] as { text: string }).text;
    assert.match(codex, /the job waits for input: answer it/);
  });
});
