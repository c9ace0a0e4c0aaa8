/**
 * The input and output contract through the real Pi CLI on the newest host: what the model writes
 * reaches the child exactly; what the child prints reaches the model bounded and readable, and the
 * disk complete and private; malformed calls get a clear error with nothing spawned, written or
 * lost.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { headerOf, inCallOrder, outputOf } from "../helpers/events.ts";
import { NEWEST_HOST_ONLY } from "../helpers/hosts.ts";
import { PiRpcHost } from "../helpers/pi-rpc.ts";
import { call, callAll, firstSession, steps } from "../helpers/scripted-model.ts";

for (const host of NEWEST_HOST_ONLY) {
  describe(`input and output on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host);
    });
    after(async () => {
      await pi?.close();
    });

    it("cat echoes what write_stdin sends, escapes decoded; Ctrl-D ends it", async () => {
      const run = await pi.run(
        "cat",
        steps(
          call("exec_command", { cmd: "cat", yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "hello\n", yield_time_ms: 500 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "tab\\there \\u20ac \\x41\\n", yield_time_ms: 500 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x04", yield_time_ms: 5_000 }),
        ),
      );
      const [, hello, escaped, eof] = run.tools;
      assert.equal(outputOf(hello!.text), "hello\n");
      // A later poll's lean header: no log path, cwd, chunk id, byte total, tty or quiet time (they are structured).
      const lean = Object.keys(headerOf(hello!.text));
      assert.deepEqual(lean.slice(0, 3), ["session_id", "wall_time_seconds", "input"], lean.join());
      for (const key of ["log_path", "cwd", "chunk_id", "output_bytes_total", "tty", "quiet_ms", "original_token_count"])
        assert.ok(!lean.includes(key), key);
      assert.equal(hello!.structuredContent.tty, false);
      assert.equal(headerOf(hello!.text).input, "6 bytes sent");
      assert.equal(hello!.structuredContent.input, "bytes");
      assert.equal(outputOf(escaped!.text), "tab\there € A\n");
      assert.equal(headerOf(eof!.text).input, "eof");
      assert.equal(headerOf(eof!.text).exit_code, "0");
    });

    it("chars_b64 delivers exact bytes, NUL and 0xFF included", async () => {
      const bytes = Buffer.from([0x00, 0xff, 0x0a, 0x41, 0x1b, 0x80]);
      const run = await pi.run(
        "od",
        steps(
          call("exec_command", { cmd: "od -An -tx1 -v", yield_time_ms: 250 }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars_b64: bytes.toString("base64") }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x04", yield_time_ms: 5_000 }),
        ),
      );
      const done = run.tools[2]!;
      assert.equal(headerOf(done.text).exit_code, "0");
      assert.equal(outputOf(done.text).trim(), "00 ff 0a 41 1b 80");
    });

    it("Ctrl-C interrupts a pipe job's process group", async () => {
      const run = await pi.run(
        "interrupt",
        steps(
          call("exec_command", {
            cmd: "trap 'echo interrupted; exit 130' INT; echo ready; while :; do sleep 0.05; done",
            yield_time_ms: 500,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x03", yield_time_ms: 5_000 }),
        ),
      );
      const interrupted = run.tools[1]!;
      assert.equal(headerOf(interrupted.text).input, "interrupt");
      assert.equal(headerOf(interrupted.text).exit_code, "130");
      assert.equal(outputOf(interrupted.text), "interrupted\n");
    });

    it("a write to a child that closed its stdin reports the failure and the job lives on", async () => {
      const run = await pi.run(
        "epipe",
        steps(
          call("exec_command", {
            cmd: "exec 0<&-; echo closed; while [ ! -e release-epipe ]; do sleep 0.05; done; echo released",
            yield_time_ms: 500,
          }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "anyone?\n" }),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "again\n" }),
        ),
      );
      const [, first, second] = run.tools;
      assert.equal(first!.isError, false);
      assert.match(headerOf(first!.text).failure_message ?? "", /^stdin write failed: .*EPIPE/);
      assert.equal(headerOf(first!.text).input, "0 bytes sent", "never the bytes asked above the failure");
      assert.equal(first!.text.split("\n")[0], "[still running]");
      assert.match(headerOf(second!.text).failure_message ?? "", /^stdin write failed/);
      execFileSync("touch", [join(pi.dirs.cwd, "release-epipe")]);
      const end = await pi.run(
        "epipe end",
        steps(call("write_stdin", { session_id: Number(headerOf(first!.text).session_id), yield_time_ms: 5_000 })),
      );
      assert.equal(headerOf(end.tools[0]!.text).exit_code, "0");
      assert.equal(outputOf(end.tools[0]!.text), "released\n");
    });

    it("a 10 MB flood gives the model at most 50 KiB and a footer; the log holds every byte, privately", async () => {
      const cmd = "head -c 10000000 /dev/zero | tr '\\0' x | fold -w 99";
      const run = await pi.run("flood", steps(call("exec_command", { cmd, yield_time_ms: 30_000 })));
      const result = run.tools[0]!;
      const header = headerOf(result.text);
      assert.equal(header.exit_code, "0");
      assert.equal(result.structuredContent.output_bytes_total, 10101010);
      assert.ok(Number(header.omitted_bytes) > 0, "retention dropped the middle");
      const output = outputOf(result.text);
      const footer = output.slice(output.lastIndexOf("\n\n[") + 2);
      // Counted on what the job printed (101 011 lines, 10 101 010 bytes), not on what retention kept.
      assert.match(
        footer,
        /^\[Showing the last \d+ of 101011 lines \(10\.1 MB; 10\.[01] MB not shown; 50\.0KB limit\)\. Full output: .+\]$/,
      );
      assert.ok(footer.includes(header.log_path!), "the footer names the log");
      assert.ok(Buffer.byteLength(output) - Buffer.byteLength(footer) <= 50 * 1024, `${Buffer.byteLength(output)} bytes of output`);
      const expected = execFileSync("bash", ["-c", cmd], { maxBuffer: 64 * 1024 * 1024 });
      const logged = readFileSync(header.log_path!);
      assert.equal(logged.length, expected.length);
      assert.ok(logged.equals(expected), "the log is byte-for-byte the stream");
      assert.equal(statSync(header.log_path!).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(header.log_path!)).mode & 0o777, 0o700);
      assert.equal(result.structuredContent.truncated, true);
      assert.equal(result.details.output, undefined);
    });

    it("seq 1 2000000: the footer counts the 2 000 000 lines the job printed, and details carry the cut for the TUI", async () => {
      const run = await pi.run("seq flood", steps(call("exec_command", { cmd: "seq 1 2000000", yield_time_ms: 30_000 })));
      const result = run.tools[0]!;
      const header = headerOf(result.text);
      assert.equal(header.exit_code, "0");
      assert.equal(header.original_token_count, "3722224", "ceil(14 888 896 / 4): every byte printed");
      const output = outputOf(result.text);
      assert.ok(
        output.endsWith(
          `1999999\n2000000\n\n[Showing the last 2000 of 2000000 lines (14.9 MB; 14.9 MB not shown). Full output: ${header.log_path}]`,
        ),
        output.slice(-200),
      );
      assert.ok(output.startsWith("1998001\n"), output.slice(0, 40));
      assert.deepEqual(result.details.truncation.printed, { bytes: 14_888_896, lines: 2_000_000 });
      assert.equal(result.details.truncation.shownLines, 2_000);
      assert.equal(statSync(header.log_path!).size, 14_888_896);
    });

    it("max_output_tokens cuts a call's output to about 4 bytes a token, on both tools, with the honest footer", async () => {
      const run = await pi.run(
        "max tokens",
        steps(call("exec_command", { cmd: "seq 1 1000; sleep 0.5; seq 1 1000", yield_time_ms: 250, max_output_tokens: 100 }), (view) =>
          call("write_stdin", { session_id: firstSession(view), yield_time_ms: 5_000, max_output_tokens: 10 }),
        ),
      );
      const [first, second] = run.tools;
      for (const [result, budget] of [
        [first!, 400],
        [second!, 40],
      ] as const) {
        const output = outputOf(result.text);
        const at = output.lastIndexOf("\n\n[");
        assert.ok(at > 0 && at <= budget, `${at} bytes of output under a ${budget}-byte budget`);
        assert.ok(output.slice(0, at).endsWith("999\n1000"), output.slice(0, at));
        assert.match(
          output.slice(at + 2),
          new RegExp(`^\\[Showing the last \\d+ of 1000 lines \\(3\\.9 KB; 3\\.\\d KB not shown; ${budget}B limit\\)\\. Full output: `),
        );
        assert.equal(result.details.max_output_tokens, budget / 4);
        assert.equal(result.structuredContent.truncated, true);
      }
    });

    it("terminal control sequences (OSC 52, title, colours) reach the model as plain text", async () => {
      const cmd = "printf '\\033]52;c;aGVsbG8=\\007\\033]0;my title\\007\\033[1;32mgreen\\033[0m plain \\033[38;5;196mred\\033[m\\n'";
      const run = await pi.run("osc", steps(call("exec_command", { cmd })));
      assert.equal(outputOf(run.tools[0]!.text), "green plain red\n");
    });

    it("a progress bar redrawn with \\r reaches the model as its final line", async () => {
      const cmd = "for i in $(seq 0 5 100); do printf '\\rprogress %3d%%' $i; sleep 0.005; done; printf '\\ndone\\r\\n'";
      const run = await pi.run("progress", steps(call("exec_command", { cmd })));
      assert.equal(outputOf(run.tools[0]!.text), "progress 100%\ndone\n");
    });

    it("a multi-byte character split across two writes arrives whole, within a call and across calls", async () => {
      const split = "printf 'price: \\342\\202'; sleep 0.6; printf '\\254 5\\n'";
      const run = await pi.run(
        "utf8",
        steps(
          call("exec_command", { cmd: split, yield_time_ms: 5_000 }),
          call("exec_command", { cmd: split, yield_time_ms: 300 }),
          (view) => call("write_stdin", { session_id: view.last[0]!.details.session_id, yield_time_ms: 5_000 }),
        ),
      );
      const [whole, firstPart, rest] = run.tools;
      assert.equal(outputOf(whole!.text), "price: € 5\n");
      assert.equal(outputOf(firstPart!.text), "price: ");
      assert.equal(outputOf(rest!.text), "€ 5\n");
    });

    it("refuses malformed exec_command arguments before spawning anything", async () => {
      const run = await pi.run(
        "bad exec",
        steps(
          callAll(
            ["exec_command", { cmd: 5 }],
            ["exec_command", { cmd: "touch string-yield", yield_time_ms: "1000" }],
            ["exec_command", { cmd: "touch negative-yield", yield_time_ms: -5 }],
          ),
        ),
      );
      const [numeric, stringYield, negative] = inCallOrder(run);
      for (const result of [numeric, stringYield, negative]) assert.equal(result!.isError, true, result!.text);
      assert.match(numeric!.text, /cmd must be a string, got number 5/);
      assert.match(stringYield!.text, /yield_time_ms must be a number, got the string "1000"/);
      assert.match(negative!.text, /yield_time_ms must be at least 0, got -5/);
      for (const marker of ["string-yield", "negative-yield"]) assert.equal(existsSync(join(pi.dirs.cwd, marker)), false, marker);
    });

    it("refuses malformed write_stdin arguments without writing; the job is not lost; long input waits are clamped visibly", async () => {
      const run = await pi.run(
        "bad write",
        steps(
          call("exec_command", { cmd: "head -n 1", yield_time_ms: 250 }),
          (view) =>
            callAll(
              ["write_stdin", { session_id: firstSession(view), chars: "a\n", chars_b64: "Yg==" }],
              ["write_stdin", { session_id: firstSession(view), chars_b64: "not base64!" }],
              ["write_stdin", { session_id: firstSession(view), chars: "c\n", yield_time_ms: "500" }],
              ["write_stdin", { session_id: firstSession(view), chars: "d\n", yield_time_ms: -1 }],
            ),
          (view) => call("write_stdin", { session_id: firstSession(view), chars: "\\x4Z\\n", yield_time_ms: 99_999 }),
        ),
      );
      const calls = inCallOrder(run);
      const [both, badBase64, stringYield, negative] = calls.slice(1, 5);
      for (const result of [both, badBase64, stringYield, negative]) assert.equal(result!.isError, true, result!.text);
      assert.match(both!.text, /chars and chars_b64 are exclusive/);
      assert.match(badBase64!.text, /chars_b64 is not valid base64/);
      assert.match(stringYield!.text, /yield_time_ms must be a number, got the string "500"/);
      assert.match(negative!.text, /yield_time_ms must be at least 0, got -1/);
      const last = calls[5]!;
      assert.equal(last.isError, false);
      assert.equal(outputOf(last.text), "\\x4Z\n", "\\x with one hex digit is kept literally, and no refused input was written");
      assert.equal(headerOf(last.text).exit_code, "0");
      assert.equal(last.details.yield_time_ms, 30_000);
      assert.equal(last.details.requested_yield_time_ms, 99_999);
      assert.ok(last.durationMs! < 10_000, "it returned at the exit, not after 30 s");
    });
  });

  describe(`Codex's result text (PI_UNIFIED_EXEC_FORMAT=codex) on ${host.name}`, () => {
    let pi: PiRpcHost;
    before(async () => {
      pi = await PiRpcHost.start(host, { env: { PI_UNIFIED_EXEC_FORMAT: "codex" } });
    });
    after(async () => {
      await pi?.close();
    });

    const CHUNK = "Chunk ID: [0-9a-f]{6}\\nWall time: \\d+\\.\\d{4} seconds\\n";

    it("exits, running jobs and polls read exactly as Codex's; our fields stay structured", async () => {
      const run = await pi.run(
        "codex text",
        steps(
          call("exec_command", { cmd: "echo hi; exit 3" }),
          call("exec_command", { cmd: "echo first; sleep 1; echo second", yield_time_ms: 300 }),
          (view) => call("write_stdin", { session_id: view.last[0]!.details.session_id, yield_time_ms: 5_000 }),
        ),
      );
      const [exited, running, polled] = run.tools;
      assert.match(exited!.text, new RegExp(`^${CHUNK}Process exited with code 3\\nOriginal token count: 1\\nOutput:\\nhi\\n$`));
      assert.equal(exited!.details.format, "codex");
      assert.equal(exited!.structuredContent.exit_code, 3);
      assert.match(exited!.structuredContent.log_path, /\.log$/);
      const id = running!.structuredContent.session_id;
      assert.match(
        running!.text,
        new RegExp(`^${CHUNK}Process running with session ID ${id}\\nOriginal token count: 2\\nOutput:\\nfirst\\n$`),
      );
      assert.match(polled!.text, new RegExp(`^${CHUNK}Process exited with code 0\\nOriginal token count: 2\\nOutput:\\nsecond\\n$`));
    });

    it("Codex's truncation under max_output_tokens, and Codex's words for an unknown id", async () => {
      const run = await pi.run(
        "codex cut",
        steps(
          call("exec_command", { cmd: "seq 1 20000", yield_time_ms: 30_000, max_output_tokens: 50 }),
          call("write_stdin", { session_id: 9999 }),
        ),
      );
      const [cut, unknown] = run.tools;
      // 108 894 bytes: 27 224 tokens at 4 bytes a token; 200 bytes kept, half from each end.
      assert.match(
        cut!.text,
        new RegExp(
          `^${CHUNK}Process exited with code 0\\nOriginal token count: 27224\\nOutput:\\n` +
            "Warning: truncated output \\(original token count: 27224\\)\\nTotal output lines: 20000\\n\\n" +
            "1\\n2\\n3\\n[\\d\\n]*…27174 tokens truncated…[\\d\\n]*19999\\n20000\\n$",
        ),
      );
      assert.equal(cut!.details.max_output_tokens, 50);
      assert.equal(cut!.details.truncation.truncatedBy, "tokens");
      assert.equal(unknown!.isError, true);
      assert.match(unknown!.text, /write_stdin failed: Unknown process id 9999/);
    });
  });
}
