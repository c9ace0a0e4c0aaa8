import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initTheme, type Theme } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import {
  execCommandRenderer,
  exitWakeDisarmedByPerson,
  killSessionRenderer,
  listSessionsRenderer,
  setOnExitRenderer,
  showInput,
  writeStdinRenderer,
} from "../../../src/pi/tui/render.ts";
import { renderWakeMessage } from "../../../src/pi/wake-message.ts";

// The expand hint reads Pi's global theme, as it does in the TUI.
initTheme();

/** A theme that leaves text plain, so tests read what is drawn. */
const theme = {
  fg: (_color: string, text: string) => text,
  bg: (_color: string, text: string) => text,
  bold: (text: string) => text,
} as unknown as Theme;

function context(args: Record<string, unknown>, over: Record<string, unknown> = {}) {
  return {
    args,
    state: {},
    invalidate: () => {},
    lastComponent: undefined,
    executionStarted: true,
    isError: false,
    durationMs: 4_200,
    ...over,
  };
}

const lines = (component: Component, width = 100) => component.render(width).map((line) => line.trimEnd());
const ESCAPES = /[\u001b\u009b\u009d\u0007]/;
/** What must never reach the terminal in a drawn line: controls (TAB aside), separators, bidi and zero-width characters. */
const LIVE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060\ufeff]/;

/** A job result as the tools write it: the header, `---`, the output, and where the output sits (`output_at`). */
function jobResultText(output: string, header = "[exited]\nexit_code: 0") {
  const before = `${header}\n---\n`;
  return {
    content: [{ type: "text", text: `${before}${output}` }],
    details: { status: "exited", exit_code: 0, log_path: "/tmp/l/job-1.log", output_at: [before.length, before.length + output.length] },
  };
}

describe("renderers", () => {
  it("exec_command: command banner with the yield and cwd", () => {
    const call = execCommandRenderer.renderCall(
      { cmd: "npm test", yield_time_ms: 2_500, workdir: "/srv/app", on_exit: "wake" },
      theme,
      context({}),
    );
    assert.deepEqual(lines(call), ["$ npm test (yield 2.5s · cwd: /srv/app · wake)"]);
  });

  it("exec_command: collapsed to the last 5 lines with an expand hint, and the took/exit footer", () => {
    const output = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n");
    const result = execCommandRenderer.renderResult(
      jobResultText(`${output}\n`),
      { expanded: false, isPartial: false },
      theme,
      context({}),
    );
    const shown = lines(result);
    assert.match(shown.join("\n"), /\.\.\. \(7 earlier lines,.*to expand.*\)/);
    assert.ok(shown.includes("line 12") && !shown.includes("line 7"));
    assert.equal(shown.at(-1), "took 4.2s · exit 0", "a plain success leaves the log path out");
    const expanded = lines(
      execCommandRenderer.renderResult(jobResultText(`${output}\n`), { expanded: true, isPartial: false }, theme, context({})),
    );
    assert.ok(expanded.includes("line 1"));
  });

  it("exec_command and write_stdin expanded (Ctrl+O): the exact text the model read, header and all, under a label; collapsed: the output only", () => {
    const result = jobResultText("ready on :3000\n", "[still running]\nsession_id: 3\nwait_status: matched\nlistening: 127.0.0.1:3000");
    const details = { ...result.details, status: "running", session_id: 3 };
    for (const renderer of [execCommandRenderer, writeStdinRenderer]) {
      const expanded = lines(renderer.renderResult({ ...result, details }, { expanded: true, isPartial: false }, theme, context({})), 200);
      const at = expanded.indexOf("the text the model read:");
      assert.ok(at !== -1, expanded.join("\n"));
      assert.deepEqual(expanded.slice(at + 1, at + 7), [
        "[still running]",
        "session_id: 3",
        "wait_status: matched",
        "listening: 127.0.0.1:3000",
        "---",
        "ready on :3000",
      ]);
      const collapsed = lines(
        renderer.renderResult({ ...result, details }, { expanded: false, isPartial: false }, theme, context({})),
        200,
      );
      assert.ok(collapsed.includes("ready on :3000"));
      assert.ok(!collapsed.some((line) => line.startsWith("wait_status")), "collapsed, the header stays hidden");
    }
  });

  it("says when the model was shown only part of the output, from details alone (real results, both formats)", async () => {
    const { jobResult } = await import("../../../src/pi/results/job-result.ts");
    const { jobReport } = await import("../../helpers/reports.ts");
    const seq = Array.from({ length: 12_000 }, (_, i) => `${i + 1}`).join("\n");
    const report = jobReport({
      job: { exit: { exitCode: 0, signal: null }, logPath: "/tmp/l/1.log" },
      output: { text: `${seq}\n`, omittedBytes: 0, printed: { bytes: 14_888_896, lines: 2_000_000 } },
    });
    for (const format of ["default", "codex"] as const) {
      const result = jobResult(report, { format });
      const shown = lines(execCommandRenderer.renderResult(result, { expanded: false, isPartial: false }, theme, context({})), 200);
      assert.match(shown.at(-1)!, /^took 4\.2s · exit 0 · log: \/tmp\/l\/1\.log · 14\.\d MB not shown, full output in the log$/, format);
      assert.ok(shown.includes("12000"), `${format}: the end of the output is drawn`);
    }
    const whole = jobResult(jobReport({ job: { exit: { exitCode: 0, signal: null } }, output: { text: "ok\n" } }));
    const plain = lines(execCommandRenderer.renderResult(whole, { expanded: false, isPartial: false }, theme, context({})));
    assert.doesNotMatch(plain.join("\n"), /not shown/);
  });

  it("a yielded job says so with its session, and whether its wake is armed", () => {
    const result = {
      content: [{ type: "text", text: "[still running]\nsession_id: 2\n---\nstarted\n" }],
      details: { status: "running", session_id: 2, log_path: "/tmp/l/job-2.log", completion_notification: "armed" },
    };
    const footer = (expanded: boolean) =>
      lines(execCommandRenderer.renderResult(result, { expanded, isPartial: false }, theme, context({}))).at(-1);
    assert.equal(footer(false), "yielded 4.2s · session 2 · wake armed");
    assert.equal(footer(true), "yielded 4.2s · session 2 · wake armed · log: /tmp/l/job-2.log");
  });

  it("a row that said wake armed redraws and says wake disarmed once the person disarms that wake from the picker", () => {
    const result = {
      content: [{ type: "text", text: "[still running]\nsession_id: 77\n---\nstarted\n" }],
      details: { status: "running", session_id: 77, log_path: "/tmp/l/job-77.log", completion_notification: "armed" },
    };
    let redraws = 0;
    const row = context({}, { invalidate: () => redraws++ });
    const footer = () => lines(execCommandRenderer.renderResult(result, { expanded: false, isPartial: false }, theme, row)).at(-1);
    assert.equal(footer(), "yielded 4.2s · session 77 · wake armed");
    exitWakeDisarmedByPerson(78);
    assert.equal(redraws, 0, "another job's disarm");
    exitWakeDisarmedByPerson(77);
    assert.equal(redraws, 1);
    assert.equal(footer(), "yielded 4.2s · session 77 · wake disarmed");
    exitWakeDisarmedByPerson(77);
    assert.equal(redraws, 1, "it no longer listens");
  });

  it("while a call waits, the row shows its clock, the real window and the session from the first update", () => {
    const update = (details: Record<string, unknown>) =>
      lines(
        writeStdinRenderer.renderResult(
          { content: [{ type: "text", text: "" }], details: { status: "running", session_id: 4, ...details } },
          { expanded: false, isPartial: true },
          theme,
          context({ session_id: 4 }, { durationMs: undefined }),
        ),
      ).at(-1);
    assert.equal(update({ wall_time_seconds: 0, yield_time_ms: 5_000 }), "elapsed 0.0s · wait ≤ 5.0s · session 4");
    assert.match(update({ wall_time_seconds: 2.5, yield_time_ms: 5_000 })!, /^elapsed 2\.5s · wait ≤ 5\.0s · session 4$/);
    const until = new Date(Date.now() + 90 * 60_000).toISOString();
    assert.match(
      update({ wall_time_seconds: 0, yield_time_ms: 5_400_000, yield_until: until })!,
      /^elapsed 0\.0s · (1h29m|1h30m) left · session 4$/,
    );
    assert.equal(
      update({ wall_time_seconds: 45, yield_time_ms: 30_000, user_typing: true }),
      "elapsed 45.0s · session 4 · the user is typing (no time limit)",
      "typing for ask_user has no window",
    );
  });

  it("Esc says the job runs on, and whether its wake will come", () => {
    const result = {
      content: [{ type: "text", text: "[cancelled]" }],
      details: { status: "cancelled", session_id: 1, completion_notification: "armed" },
    };
    assert.equal(
      lines(execCommandRenderer.renderResult(result, { expanded: false, isPartial: false }, theme, context({}))).at(-1),
      "still running in the background · session 1 · wake armed",
    );
  });

  it("a non-zero exit and a timeout are drawn as errors, with the log path", () => {
    const marking = { ...theme, fg: (color: string, text: string) => (color === "error" ? `<error>${text}</error>` : text) } as Theme;
    const failed = jobResultText("boom\n");
    failed.details = { ...failed.details, exit_code: 2 };
    const footer = lines(execCommandRenderer.renderResult(failed, { expanded: false, isPartial: false }, marking, context({}))).at(-1);
    assert.equal(footer, "<error>took 4.2s · exit 2 · log: /tmp/l/job-1.log</error>");
    const timedOut = jobResultText("");
    timedOut.details = { ...timedOut.details, exit_code: null, signal: "SIGTERM", timed_out: true } as unknown as typeof timedOut.details;
    const drawn = lines(execCommandRenderer.renderResult(timedOut, { expanded: false, isPartial: false }, marking, context({}))).at(-1);
    assert.match(drawn!, /^<error>took 4\.2s · killed by SIGTERM · log: \/tmp\/l\/job-1\.log<\/error> · timed out$/);
  });

  it("write_stdin: poll, input with control bytes as ^C, base64 as a byte count, absolute waits with time left", () => {
    const banner = (args: Record<string, unknown>) => lines(writeStdinRenderer.renderCall(args, theme, context(args)))[0];
    assert.equal(banner({ session_id: 2 }), "⟳ poll → session 2", "the default window is not repeated");
    assert.equal(banner({ session_id: 1, chars: "print(7*6)\\r", yield_time_ms: 1_000 }), "» print(7*6)\\r → session 1 (yield 1.0s)");
    assert.equal(banner({ session_id: 1, chars: "\\x03" }), "» ^C → session 1");
    assert.equal(banner({ session_id: 1, chars: "\u0004" }), "» ^D → session 1");
    assert.equal(banner({ session_id: 1, chars_b64: "AP8KGw==" }), "» (base64, 4 bytes) → session 1");
    assert.equal(banner({ session_id: 1, cols: 90, rows: 20 }), "» resize 90×20 → session 1");
    assert.equal(
      banner({ session_id: 1, until_pattern: "ready", until_quiet_ms: 2_000 }),
      "⟳ poll → session 1 (until /ready/ · until quiet 2.0s)",
    );
    const until = new Date(Date.now() + 2 * 3_600_000 + 40 * 60_000 + 30_000).toISOString();
    assert.match(banner({ session_id: 3, yield_until: until })!, /^⟳ poll → session 3 \(until .*Z, 2h40m left\)$/);
  });

  it("kill_session, list_sessions and set_on_exit have their own banners", () => {
    assert.deepEqual(lines(killSessionRenderer.renderCall({ session_id: 3, signal: "SIGKILL" }, theme, context({}))), [
      "✕ kill session 3 (SIGKILL)",
    ]);
    assert.deepEqual(lines(listSessionsRenderer.renderCall({}, theme, context({}))), ["≡ list_sessions"]);
    assert.deepEqual(lines(setOnExitRenderer.renderCall({ session_id: 2, on_exit: "none" }, theme, context({}))), [
      "set_on_exit session 2 → on_exit none",
    ]);
  });

  it("kill_session is one line: what stopped, the exit, the cleanup, and escalation or survivors when they happen", () => {
    const kill = (details: Record<string, unknown>, expanded = false, isError = false) =>
      lines(
        killSessionRenderer.renderResult(
          { content: [{ type: "text", text: "[killed]\nsession_id: 1\n---\nbye\n" }], details },
          { expanded, isPartial: false },
          theme,
          context({}, { isError }),
        ),
        200,
      ).filter(Boolean);
    const base = { status: "killed", session_id: 1, exit_code: null, signal: "SIGTERM", escalated: false, cleanup: "confirmed" };
    assert.deepEqual(kill(base), ["■ stopped session 1 · killed by SIGTERM · cleanup confirmed"]);
    assert.deepEqual(kill({ ...base, signal: "SIGKILL", escalated: true, survivors: [41, 42], cleanup: "unconfirmed" }), [
      "■ stopped session 1 · killed by SIGKILL · escalated to SIGKILL · cleanup unconfirmed · survivors 41, 42",
    ]);
    assert.deepEqual(kill({ ...base, status: "already_exited", exit_code: 0, signal: undefined }), [
      "■ already exited: session 1 · exit 0 · cleanup confirmed",
    ]);
    const expanded = kill({ ...base, command: "sleep 100", cwd: "/w", log_path: "/l/1.log", output_at: [27, 30] }, true);
    assert.equal(expanded.length, 3, "expanded adds the command line and the unread output");
    assert.ok(expanded.includes("bye"));
    assert.deepEqual(kill({}, false, true).join(""), "[killed]session_id: 1---bye", "a refusal shows its own text");
  });

  it("list_sessions is one line per job; expanded shows the rest", () => {
    const details = {
      tool_time_utc: "2026-01-01T00:00:00.000Z",
      running: 1,
      exited: 1,
      sessions: [
        {
          session_id: 1,
          status: "running",
          elapsed_seconds: 130,
          command: "python3 -m http.server 8765",
          wake_armed: true,
          cwd: "/w",
          quiet_ms: 2_000,
          output_bytes_total: 10,
          log_path: "/l/1.log",
        },
        {
          session_id: 2,
          status: "exited",
          exit_code: 1,
          elapsed_seconds: 3.2,
          command: "make",
          wake_armed: false,
          cwd: "/w",
          quiet_ms: 0,
          output_bytes_total: 0,
          log_path: "/l/2.log",
        },
      ],
    };
    const list = (expanded: boolean) =>
      lines(
        listSessionsRenderer.renderResult(
          { content: [{ type: "text", text: "…" }], details },
          { expanded, isPartial: false },
          theme,
          context({}),
        ),
      ).filter(Boolean);
    assert.deepEqual(list(false), ["1 running 2m10s python3 -m http.server 8765 [wake]", "2 exit 1 3.2s make"]);
    assert.equal(list(true).length, 4);
    assert.match(list(true)[1]!, /cwd \/w · quiet 2\.0s · 10 bytes · log \/l\/1\.log/);
    const empty = { ...details, sessions: [] };
    assert.deepEqual(
      lines(
        listSessionsRenderer.renderResult({ content: [], details: empty }, { expanded: false, isPartial: false }, theme, context({})),
      ).filter(Boolean),
      ["no sessions"],
    );
  });

  it("is terminal-safe: nothing a child printed or the model wrote reaches the terminal as an escape sequence", () => {
    const hostile = "\u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned\u0007\u001b[2J\u001b[H\u009b31mred";
    const rendered = [
      ...lines(execCommandRenderer.renderCall({ cmd: `echo ${hostile}` }, theme, context({}))),
      ...lines(execCommandRenderer.renderResult(jobResultText(`${hostile}\n`), { expanded: true, isPartial: false }, theme, context({}))),
      ...lines(
        execCommandRenderer.renderResult(
          { content: [{ type: "text", text: hostile }], details: {} },
          { expanded: false, isPartial: true },
          theme,
          context({}),
        ),
      ),
      ...lines(writeStdinRenderer.renderCall({ session_id: 1, chars: hostile }, theme, context({}))),
      ...lines(
        killSessionRenderer.renderResult(
          { content: [{ type: "text", text: `[killed]\n---\n${hostile}` }], details: {} },
          { expanded: true, isPartial: false },
          theme,
          context({}),
        ),
      ),
    ];
    for (const line of rendered) assert.doesNotMatch(line, ESCAPES, JSON.stringify(line));
    assert.ok(rendered.some((line) => line.includes("red")));
  });

  it("draws every argument of every tool inert, whatever its type", () => {
    const hostile =
      "\u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned\u0007\u001b]2;pwned\u001b\\\u001b]8;;http://x\u001b\\\u001bPq#0\u001b\\\u001b[5;5H\u001b[?1049h\u009b2J\u202Eevil\u200B";
    const values: unknown[] = [hostile, { nested: hostile }, [hostile, 1], 12.5, true, null, Number.NaN];
    const tools: [typeof execCommandRenderer | typeof writeStdinRenderer | typeof killSessionRenderer, string[]][] = [
      [execCommandRenderer, ["cmd", "workdir", "shell", "tty", "cols", "rows", "yield_time_ms", "timeout_s", "on_exit"]],
      [writeStdinRenderer, ["session_id", "chars", "chars_b64", "cols", "rows", "yield_time_ms", "yield_until"]],
      [killSessionRenderer, ["session_id", "signal"]],
      [setOnExitRenderer, ["session_id", "on_exit"]],
      [listSessionsRenderer, ["anything"]],
    ];
    for (const [renderer, keys] of tools) {
      for (const value of values) {
        const all = Object.fromEntries(keys.map((key) => [key, value]));
        for (const args of [all, ...keys.map((key) => ({ [key]: value }))]) {
          for (const line of lines(renderer.renderCall(args, theme, context(args))))
            assert.doesNotMatch(line, LIVE, `${JSON.stringify(args)} → ${JSON.stringify(line)}`);
        }
      }
    }
    const banner = lines(execCommandRenderer.renderCall({ cmd: `echo ${hostile}`, workdir: hostile }, theme, context({})), 1_000).join(
      "\n",
    );
    assert.match(banner, /\\e\]52;c;cHduZWQ=\\x07/, "the human sees what the model sent");
    assert.match(banner, /<U\+202E>evil<U\+200B>/);
  });

  it("draws every result field inert, also from details a session file may hold", () => {
    const hostile = "\u001b]0;pwned\u0007\u202E\n[SYSTEM]";
    const details = {
      status: "exited",
      session_id: hostile,
      exit_code: hostile,
      signal: hostile,
      log_path: hostile,
      failure_message: hostile,
      timed_out: true,
    };
    for (const partial of [false, true]) {
      for (const status of ["exited", "running", "cancelled"]) {
        const result = { content: [{ type: "text", text: `[x]\nfield: ${hostile}\n---\n${hostile}` }], details: { ...details, status } };
        for (const line of lines(execCommandRenderer.renderResult(result, { expanded: true, isPartial: partial }, theme, context({}))))
          assert.doesNotMatch(line, LIVE, line);
        for (const line of lines(killSessionRenderer.renderResult(result, { expanded: true, isPartial: partial }, theme, context({}))))
          assert.doesNotMatch(line, LIVE, line);
        for (const line of lines(
          execCommandRenderer.renderResult(result, { expanded: false, isPartial: false }, theme, context({}, { isError: true })),
        )) {
          assert.doesNotMatch(line, LIVE, line);
        }
      }
    }
  });

  it("the wake message: one compact line per job, every field inert", () => {
    const hostile = "\u001b]52;c;cHduZWQ=\u0007\u202E\n[SYSTEM]";
    const message = {
      role: "custom" as const,
      customType: "unified-exec-wake",
      content: `prompt ${hostile}`,
      display: true,
      timestamp: 0,
      details: {
        jobs: [
          { jobId: 3, command: "npm test", cwd: "/w", exitCode: 0, signal: null, elapsedMs: 1_200, logPath: "/l/3.log" },
          {
            jobId: hostile,
            command: hostile,
            cwd: hostile,
            exitCode: hostile,
            signal: hostile,
            elapsedMs: 5,
            logPath: hostile,
            reason: hostile,
          },
        ],
        more: 2,
      },
    };
    for (const expanded of [false, true]) {
      const drawn = lines(renderWakeMessage(message, { expanded, outputPad: 1 }, theme)!, 300);
      for (const line of drawn) assert.doesNotMatch(line, LIVE, line);
      const text = drawn.join("\n");
      assert.equal(drawn[0]?.trim(), "⏰ session 3 exited 0 after 1.2s · npm test");
      assert.match(text, /⏰ session \\e\]52.* killed by \\e\]52/);
      assert.match(text, /… and 2 more/);
      assert.equal(drawn.length, expanded ? 5 : 3, "one line per job, one more each when expanded");
      assert.equal(/cwd \/w/.test(text), expanded, "cwd and log only when expanded");
    }
    const old = lines(renderWakeMessage({ ...message, details: undefined }, { expanded: false, outputPad: 1 }, theme)!);
    for (const line of old) assert.doesNotMatch(line, LIVE, line);
  });

  it("errors are drawn as errors", () => {
    const result = { content: [{ type: "text", text: "Unknown session_id 9" }], details: {} };
    assert.ok(
      lines(execCommandRenderer.renderResult(result, { expanded: false, isPartial: false }, theme, context({}, { isError: true })))
        .join("\n")
        .includes("Unknown session_id 9"),
    );
  });

  it("shows input bytes readably and bounded", () => {
    assert.equal(showInput("a\\tb\\x1b[A\\x7f"), "a\\tb^[[A^?");
    assert.equal(showInput("x".repeat(200)).length, 81);
  });
});
