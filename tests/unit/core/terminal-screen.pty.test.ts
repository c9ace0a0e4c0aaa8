/**
 * The screen emulator behind real programs on real PTYs: vim, top, less, a cursor-position query.
 * `.ci/run` installs vim, less and procps where they are missing; elsewhere a missing program skips
 * its test with the reason, except under EXPECT_PTY=1, where it runs and fails.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { type ScreenJob, type ScreenJobOptions, startOnScreen } from "../../helpers/screen-pty.ts";
import { cursorPositionAnswered, lastBytesOnScreen } from "../../helpers/screen-scenarios.ts";

const dir = mkdtempSync(join(tmpdir(), "screen-pty-"));
// Its own HOME: no user vimrc or lesskey; vim loads Debian's defaults.vim (ruler, showcmd) as for a new user.
const env = { HOME: dir, LESS: "", LESSOPEN: "", VIMINIT: "" };
const jobs: ScreenJob[] = [];

function start(command: string, options: ScreenJobOptions = {}): ScreenJob {
  const job = startOnScreen(command, { cwd: dir, env, ...options });
  jobs.push(job);
  return job;
}

after(() => {
  for (const job of jobs) job.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The `skip` option for a test that drives `program`: false, or why it cannot run here. */
function needs(program: string): string | false {
  if (SKIP_WITHOUT_PTY) return SKIP_WITHOUT_PTY;
  const found = spawnSync("sh", ["-c", `command -v ${program}`]).status === 0;
  return found || process.env.EXPECT_PTY === "1" ? false : `${program} is not installed (apt-get install -y vim less procps)`;
}

const fillers = (lines: string[], from: number, to: number) => lines.slice(from, to).every((line) => line === "~");

describe("a PTY job's screen: vim", () => {
  it(
    "shows the file's lines and ~ filler on the alternate screen; typing ihello<Esc>:wq<CR> writes the file",
    { skip: needs("vim") },
    async () => {
      writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\ngamma\n");
      const job = start("vim notes.txt");
      const shown = await job.waitForScreen((s) => s.lines[0] === "alpha" && fillers(s.lines, 3, 23), "vim showing the file");
      assert.deepEqual(shown.lines.slice(0, 3), ["alpha", "beta", "gamma"]);
      assert.equal(shown.alternate, true);
      assert.deepEqual(shown.cursor, { row: 1, col: 1 });
      assert.equal(shown.lines.length, 24);
      // vim asked the terminal things (cursor position, version) and got answers.
      assert.ok(job.replies.length > 0, "vim's terminal queries were answered");
      await job.type("ihello\x1b:wq\r");
      assert.equal((await job.exited).code, 0);
      await job.closed;
      assert.equal(readFileSync(join(dir, "notes.txt"), "utf8"), "helloalpha\nbeta\ngamma\n");
      assert.equal((await job.screen.snapshot()).alternate, false);
    },
  );

  it("redraws to the new size when the PTY is resized, larger then smaller", { skip: needs("vim") }, async () => {
    writeFileSync(join(dir, "resize.txt"), "one\ntwo\n");
    const job = start("vim resize.txt", { cols: 80, rows: 24 });
    await job.waitForScreen((s) => s.lines[0] === "one" && fillers(s.lines, 2, 23), "vim at 80×24");
    job.resize(100, 30);
    const larger = await job.waitForScreen((s) => s.lines.length === 30 && fillers(s.lines, 2, 29), "vim redrawn at 100×30");
    assert.deepEqual([larger.cols, larger.rows], [100, 30]);
    // The ruler ("1,1  All") sits near the right edge of the new width.
    assert.match(larger.lines[29]!, /1,1\s+All$/);
    assert.ok(larger.lines[29]!.length > 80, larger.lines[29]);
    job.resize(60, 10);
    const smaller = await job.waitForScreen(
      (s) => s.lines.length === 10 && s.lines[0] === "one" && fillers(s.lines, 2, 9) && /All$/.test(s.lines[9]!),
      "vim redrawn at 60×10",
    );
    assert.ok(smaller.lines[9]!.length <= 60);
    await job.type("\x1b:q!\r");
    assert.equal((await job.exited).code, 0);
  });
});

describe("a PTY job's screen: top and less", () => {
  it("top -d 1: the screen shows its header lines, while the stream glues partial frames together", { skip: needs("top") }, async () => {
    const job = start("top -d 1", { cols: 100, rows: 30 });
    const stream = () => renderTerminalText(job.raw().toString("utf8"));
    const frames = () => stream().split("top - ").length - 1;
    const deadline = performance.now() + 15_000;
    while (frames() < 3 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(frames() >= 3, `top printed ${frames()} frames`);
    const screen = await job.screen.snapshot();
    assert.match(screen.lines[0]!, /^top - \d\d:\d\d:\d\d up .*load average/);
    assert.match(screen.lines[1]!, /^Tasks:\s+\d+ total/);
    assert.match(screen.lines[2]!, /Cpu\(s\)/);
    assert.match(screen.lines[3]!, /Mem/);
    assert.match(screen.lines[4]!, /Swap/);
    const header = screen.lines.findIndex((line) => /^\s*PID\s+USER\s+/.test(line));
    assert.ok(header > 4, "the process table's header is on the screen");
    assert.equal(screen.lines.filter((line) => line.includes("top - ")).length, 1);
    assert.ok(screen.lines.length <= 30);
    // procps top redraws the normal screen in place, by cursor addressing: no alternate screen, but repainting.
    assert.equal(screen.alternate, false);
    assert.equal(screen.repainting, true);
    // The stream as text: top redraws only what changed, so its latest frame lacks lines the screen
    // still shows (the table header is drawn once), and frames run into each other.
    const latest = stream().slice(stream().lastIndexOf("top - "));
    const labels = [/^Tasks:/, /^%Cpu/, /^MiB Mem/, /^MiB Swap/, /^\s*PID\s+USER/];
    assert.ok(labels.every((label) => screen.lines.some((line) => label.test(line))));
    const missing = labels.filter((label) => !latest.split("\n").some((line) => label.test(line)));
    assert.ok(missing.length > 0, `the stream's latest frame has every header line:\n${latest}`);
    await job.type("q");
    assert.equal((await job.exited).code, 0);
  });

  it("less on a 500-line file shows one screen on the alternate screen, and q leaves it", { skip: needs("less") }, async () => {
    writeFileSync(join(dir, "long.txt"), `${Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    const job = start("less long.txt", { cols: 80, rows: 24 });
    const page = await job.waitForScreen((s) => s.lines[22] === "line 23" && s.lines.length === 24, "less showing the first page");
    assert.deepEqual(
      page.lines.slice(0, 23),
      Array.from({ length: 23 }, (_, i) => `line ${i + 1}`),
    );
    assert.match(page.lines[23]!, /long\.txt|:/);
    assert.equal(page.alternate, true);
    assert.equal(page.cursor.row, 24);
    await job.type(" ");
    await job.waitForScreen((s) => s.lines[0] === "line 24" && s.lines[22] === "line 46", "less showing the second page");
    await job.type("q");
    assert.equal((await job.exited).code, 0);
    await job.closed;
    assert.equal((await job.screen.snapshot()).alternate, false);
  });
});

describe("a PTY job's screen: queries and ordering", { skip: SKIP_WITHOUT_PTY }, () => {
  it("a program asking for the cursor position gets ESC[row;colR written back (3 runs)", async () => {
    for (let run = 0; run < 3; run++) await cursorPositionAnswered(start, run);
  });

  it("after the output is read to the end, a snapshot shows its last bytes (3 runs)", async () => {
    for (let run = 0; run < 3; run++) await lastBytesOnScreen(start, run);
  });
});
