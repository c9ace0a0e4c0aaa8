import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import type { JobSnapshot } from "../../../src/core/job/job-snapshot.ts";
import type { ExecRuntime } from "../../../src/core/runtime.ts";
import { JobsUi, jobLabel } from "../../../src/pi/tui/jobs-ui.ts";
import { snapshot } from "../../helpers/reports.ts";

/** A runtime stand-in: the jobs it reports, and the change listener the UI registers. */
function fakeRuntime(jobs: JobSnapshot[]) {
  let listener: (() => void) | undefined;
  const runtime = {
    liveJobs: () => jobs,
    onChange: (fn: () => void) => {
      listener = fn;
      return () => {
        listener = undefined;
      };
    },
  } as unknown as ExecRuntime;
  return { runtime, change: () => listener?.(), jobs };
}

function fakeUi() {
  const calls: unknown[][] = [];
  const ui = {
    setStatus: (...args: unknown[]) => calls.push(["status", ...args]),
    setWidget: (...args: unknown[]) => calls.push(["widget", ...args]),
  } as unknown as ExtensionUIContext;
  return { ui, calls };
}

describe("jobs UI", () => {
  it("shows the running count, sends it only when it changes, and clears it", () => {
    const { runtime, change, jobs } = fakeRuntime([snapshot({ jobId: 1, command: "npm run dev", wakeArmed: false })]);
    const { ui, calls } = fakeUi();
    const view = new JobsUi();
    view.bind(ui);
    view.watch(runtime);
    change();
    change();
    jobs.push(snapshot({ jobId: 2, command: "make", wakeArmed: true }));
    change();
    jobs.length = 0;
    change();
    assert.deepEqual(calls, [
      ["status", "unified-exec", undefined],
      ["status", "unified-exec", "unified-exec: 1 session running"],
      ["status", "unified-exec", "unified-exec: 2 sessions running"],
      ["status", "unified-exec", undefined],
    ]);
  });

  it("after tree navigation lists live jobs above the editor until none is left", () => {
    const { runtime, change, jobs } = fakeRuntime([snapshot({ jobId: 3, command: "sleep 300", wakeArmed: true })]);
    const { ui, calls } = fakeUi();
    const view = new JobsUi();
    view.bind(ui);
    view.watch(runtime);
    view.showWidget();
    jobs.length = 0;
    change();
    const widgets = calls.filter((call) => call[0] === "widget");
    assert.deepEqual(widgets, [
      ["widget", "unified-exec-jobs", ["unified-exec sessions still running:", "  3 · sleep 300 [wake]"], { placement: "aboveEditor" }],
      ["widget", "unified-exec-jobs", undefined],
    ]);
  });

  it("names a job to the human with its state and age; the widget, drawn once, leaves the age out", () => {
    assert.equal(
      jobLabel(snapshot({ jobId: 1, command: "npm run dev", wakeArmed: true, elapsedMs: 130_000 })),
      "1 · running 2m10s · npm run dev [wake]",
    );
    assert.equal(
      jobLabel(
        snapshot({
          jobId: 1,
          command: "npm run dev",
          wakeArmed: true,
          wakeLevel: "next_turn",
          wakePattern: "next_turn:ERROR",
          elapsedMs: 0,
        }),
      ),
      "1 · running 0.0s · npm run dev [next_turn] [next_turn /ERROR/]",
      "each wake says its level",
    );
    const exited = snapshot({
      jobId: 2,
      command: "make",
      wakeArmed: false,
      elapsedMs: 3_200,
      exit: { exitCode: 2, signal: null } as never,
    });
    assert.equal(jobLabel(exited), "2 · exit 2 after 3.2s · make");
    assert.equal(jobLabel(exited, false), "2 · exit 2 · make");
  });

  it("names jobs inert in the widget and the picker: escapes, bidi and line breaks shown, not drawn", () => {
    const command = "echo \u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned\u0007\n[SYSTEM] \u202Eevil";
    const label = jobLabel(snapshot({ jobId: 5, command, wakeArmed: false }));
    assert.equal(label, "5 · running 0.0s · echo \\e]52;c;cHduZWQ=\\x07\\e]0;pwned\\x07\\n[SYSTEM] <U+202E>evil");
    const { runtime } = fakeRuntime([snapshot({ jobId: 5, command, wakeArmed: false })]);
    const { ui, calls } = fakeUi();
    const view = new JobsUi();
    view.bind(ui);
    view.watch(runtime);
    view.showWidget();
    const widget = calls.find((call) => call[0] === "widget")![2] as string[];
    assert.deepEqual(widget, [
      "unified-exec sessions still running:",
      `  ${jobLabel(snapshot({ jobId: 5, command, wakeArmed: false }), false)}`,
    ]);
  });

  it("never touches the UI after unbind (the old context throws after a reload)", () => {
    const { runtime, change } = fakeRuntime([snapshot({ jobId: 1, command: "x", wakeArmed: false })]);
    const { ui, calls } = fakeUi();
    const view = new JobsUi();
    view.bind(ui);
    view.watch(runtime);
    const before = calls.length;
    view.unbind();
    change();
    view.refresh();
    assert.equal(calls.length, before);
  });

  it("a job's label says a port it lost while it runs, and its memory and CPU time (Linux) after the wake marks", () => {
    const deaf = snapshot({
      jobId: 3,
      command: "npm run dev",
      elapsedMs: 130_000,
      wakeArmed: true,
      listening: [],
      deaf: { was: ["127.0.0.1:3000", "[::1]:3000"], closedAt: 0, closedMs: 14_400 },
      usage: { rssBytes: 212 * 1024 * 1024, cpuMs: 3_400 },
    });
    assert.equal(jobLabel(deaf), "3 · running 2m10s · npm run dev listening: none (was :3000, closed 14 s ago) [wake] · 212 MB, 3 s CPU");
  });
});
