/**
 * A prompt that hides what is typed is the person's (SPEC §3d): the terminal's flags read on plain
 * data and on real PTYs, and through a runtime with real jobs: `input_wait: secret`, the model's text
 * refused before a byte is written (control keys still go), `read -p` untouched, the person's
 * `PI_UNIFIED_EXEC_MODEL_SECRETS=allow`, and a prompt hidden just before the model's write arrives.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hidesTyping, refuseModelSecret, terminalHidesTyping } from "../../../src/core/input-wait/input-wait.ts";
import { prepareExec, prepareWrite } from "../../../src/core/request/request.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";
import { loadPtyModule, spawnPty } from "../../../src/core/transport/pty.ts";
import { jobResult } from "../../../src/pi/results/job-result.ts";
import { StartedJobs } from "../../helpers/jobs.ts";
import { waitFor } from "../../helpers/processes.ts";
import { SKIP_WITHOUT_PTY } from "../../helpers/pty.ts";
import { runningId } from "../../helpers/reports.ts";
import { runtimeWithWakes, scratchDirectory, shutDownAfter } from "../../helpers/runtime.ts";
import { writeAsPromptIsHidden } from "../../helpers/secret-prompt.ts";

const LINUX_PTY = process.platform !== "linux" ? "the echo flag is read on Linux only" : SKIP_WITHOUT_PTY;
const PASSWORD = `read -s -p 'Password: ' x; echo; echo "len=\${#x}"; sleep 300`;
const scratch = scratchDirectory("secret-");
const keep = shutDownAfter();
const exec = (cmd: string, extra: Record<string, unknown> = {}) =>
  prepareExec({ cmd, tty: true, yield_time_ms: 5_000, ...extra }, process.cwd(), process.env);
const write = (id: number, extra: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env) =>
  prepareWrite({ session_id: id, yield_time_ms: 1_000, ...extra }, env);

/** A runtime with the job `cmd` started on a PTY and its prompt `until` out. */
async function started(cmd: string, until: string) {
  const { runtime } = runtimeWithWakes();
  keep(runtime);
  const id = runningId(await runtime.exec(exec(cmd, { until_pattern: until })))!;
  return { runtime, id };
}

/** The refusal of a model's write into a hidden prompt: typed, for the model, never quoting what was written. */
async function refused(write: Promise<unknown>, id: number): Promise<void> {
  await assert.rejects(write, (error: Error) => {
    assert.ok(error instanceof ExecRequestError);
    assert.match(error.message, new RegExp(`session ${id} asks for a secret`));
    assert.match(error.message, new RegExp(`write_stdin\\(session_id: ${id}, ask_user: `));
    assert.match(error.message, /Nothing was written/);
    assert.doesNotMatch(error.message, /hunter2/);
    return true;
  });
}

describe("whether a terminal hides what is typed", () => {
  it("reads stty -g's lflag: echo off in canonical mode hides; echo on, or raw mode (a REPL echoes itself), does not", () => {
    assert.equal(hidesTyping("6d02:5:4bf:8a33:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0"), true, "read -s: -echo icanon");
    assert.equal(hidesTyping("6d02:5:4bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0"), false, "the default: echo icanon");
    assert.equal(hidesTyping("0:4:bf:8a30:3:1c:7f:15:4:0:1:0"), false, "raw: -echo -icanon");
    assert.equal(hidesTyping("stty: /dev/pts/99: No such file"), undefined);
  });

  it("control keys alone are never refused, and the terminal is then not even read", async () => {
    let reads = 0;
    const hidden = async () => {
      reads++;
      return true;
    };
    for (const keys of ["\x03", "\x04", "\r", "\n", "\r\n", "\x7f\x15", "\x1b"]) await refuseModelSecret(1, Buffer.from(keys), hidden);
    assert.equal(reads, 0);
    for (const text of ["hunter2\n", "y", " ", "é", "\x1b[A"])
      await assert.rejects(refuseModelSecret(1, Buffer.from(text), hidden), ExecRequestError, JSON.stringify(text));
    await assert.doesNotReject(refuseModelSecret(1, Buffer.from("hunter2\n"), async () => false));
    await assert.doesNotReject(
      refuseModelSecret(1, Buffer.from("hunter2\n"), async () => undefined),
      "unknown: as before",
    );
  });

  describe("on real PTYs", { skip: LINUX_PTY }, () => {
    const jobs = new StartedJobs();
    const pty = async (command: string, ready: string) => {
      let text = "";
      const transport = spawnPty(
        { file: "/bin/bash", args: ["--norc", "--noprofile", "-c", command], cwd: "/tmp", env: process.env, cols: 80, rows: 24 },
        {
          data: (chunk) => {
            text += chunk.toString();
          },
          exit: () => {},
          closed: () => {},
        },
        loadPtyModule(),
      );
      jobs.transport(transport);
      await waitFor(() => text.includes(ready), ready);
      return transport.stdinIdentity;
    };

    it("read -s hides, read -p and a raw-mode reader do not; off Linux (the platform mocked) it is not read: unknown, as before", async () => {
      const hidden = await pty("read -s -p 'Password: ' x; sleep 30", "Password: ");
      assert.equal(await terminalHidesTyping(hidden), true);
      assert.equal(await terminalHidesTyping(hidden, "darwin"), undefined);
      assert.equal(await terminalHidesTyping(await pty("read -p 'Name: ' x; sleep 30", "Name: ")), false);
      assert.equal(await terminalHidesTyping(await pty("stty raw -echo; printf 'raw> '; read x; sleep 30", "raw> ")), false);
      assert.equal(await terminalHidesTyping("/dev/pts/999999"), undefined);
    });

    it("reading the terminal never holds Pi's event loop: a callback queued as the read starts runs before it ends", async () => {
      const hidden = await pty("read -s -p 'Password: ' x; sleep 30", "Password: ");
      let ran = false;
      setImmediate(() => {
        ran = true;
      });
      const read = terminalHidesTyping(hidden);
      assert.equal(ran, false);
      assert.equal(await read, true);
      assert.equal(ran, true, "the loop ran while stty did");
    });
  });
});

describe("a model's write into a prompt that hides what is typed", { skip: LINUX_PTY }, () => {
  it("read -s is input_wait: secret; the model's hunter2 is refused and never reaches the job; Enter alone goes through", async () => {
    const { runtime, id } = await started(PASSWORD, "Password: ");
    await waitFor(() => runtime.list().find((job) => job.jobId === id)?.inputWait?.secret === true, "the listing's input_wait: secret");
    // Ctrl-U, a control key, goes through (it clears the line the terminal holds) and the result says secret.
    const cleared = await runtime.interact(write(id, { chars: "\\x15", yield_time_ms: 500 }));
    assert.equal(cleared.inputWait?.secret, true, JSON.stringify(cleared.inputWait));
    assert.match((jobResult(cleared).content[0] as { text: string }).text, /^input_wait: secret$/m);
    await refused(runtime.interact(write(id, { chars: "hunter2\\n" })), id);
    await refused(runtime.interact(write(id, { chars_b64: Buffer.from("hunter2\n").toString("base64") })), id);
    const entered = await runtime.interact(write(id, { chars: "\\r", until_pattern: "^len=", yield_time_ms: 5_000 }));
    assert.match(entered.output.text, /^len=0$/m, "the job read an empty line: no byte of the refused writes");
  });

  it("Ctrl-C still reaches a hidden prompt", async () => {
    const { runtime, id } = await started(PASSWORD, "Password: ");
    const report = await runtime.interact(write(id, { chars: "\\x03", yield_time_ms: 5_000 }));
    assert.equal(report.job.exit?.exitCode, 130);
  });

  it("read -p 'Name: ' still takes the model's text", async () => {
    const { runtime, id } = await started(`read -p 'Name: ' x; echo "len=\${#x}"; sleep 300`, "Name: ");
    const report = await runtime.interact(write(id, { chars: "bob\\r", until_pattern: "^len=", yield_time_ms: 5_000 }));
    assert.match(report.output.text, /^len=3$/m);
  });

  it("with the person's PI_UNIFIED_EXEC_MODEL_SECRETS=allow the model's text goes through", async () => {
    const { runtime, id } = await started(PASSWORD, "Password: ");
    const allow = { ...process.env, PI_UNIFIED_EXEC_MODEL_SECRETS: "allow" };
    const report = await runtime.interact(write(id, { chars: "hunter2\\r", until_pattern: "^len=", yield_time_ms: 5_000 }, allow));
    assert.match(report.output.text, /^len=7$/m);
  });

  it("a prompt hidden just before its line is drawn: the flag is read as the write arrives, though no result showed the job waiting", async () => {
    await writeAsPromptIsHidden(scratch);
  });
});
