import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkArguments } from "../../../src/pi/arguments.ts";
import { execCommandParameters } from "../../../src/pi/tools/exec-command.ts";
import { writeStdinParameters } from "../../../src/pi/tools/write-stdin.ts";

const exec = (raw: unknown) => checkArguments("exec_command", execCommandParameters, raw);
const poll = (raw: unknown) => checkArguments("write_stdin", writeStdinParameters, raw);

describe("raw argument checks", () => {
  it("passes valid arguments through unchanged", () => {
    const args = { cmd: "ls", workdir: "src", shell: "sh", yield_time_ms: 1000 };
    assert.deepEqual(exec(args), args);
    assert.deepEqual(poll({ session_id: 3 }), { session_id: 3 });
  });

  it("names unknown fields and lists the accepted ones", () => {
    assert.throws(
      () => exec({ cmd: "ls", bogus: 1, other: 2 }),
      /exec_command: unknown fields "bogus", "other"\. Accepted fields: cmd, workdir, shell, tty, cols, rows, yield_time_ms, until_pattern, until_quiet_ms, until_listening, screen, on_exit, wake_on_pattern, login, max_output_tokens, timeout_s\./,
    );
    assert.throws(
      () => poll({ session_id: 1, input: "x" }),
      /write_stdin: unknown field "input"\. Accepted fields: session_id, chars, chars_b64, cols, rows, yield_time_ms, yield_until, until_pattern, until_quiet_ms, until_listening, max_output_tokens, screen, ask_user\./,
    );
  });

  it("checks raw types before any coercion", () => {
    assert.throws(() => exec({ cmd: 5 }), /cmd must be a string, got number 5/);
    assert.throws(() => exec({ cmd: "ls", yield_time_ms: "1000" }), /yield_time_ms must be a number, got the string "1000"/);
    assert.throws(() => poll({ session_id: 1.5 }), /session_id must be an integer, got number 1.5/);
    assert.throws(() => poll({ session_id: "3" }), /session_id must be an integer, got the string "3"/);
  });

  it("checks required fields, enums and minimums, reporting every problem at once", () => {
    assert.throws(() => exec({}), /exec_command: cmd is required\./);
    assert.throws(
      () => exec({ cmd: "ls", shell: "fish" }),
      /shell must be one of "bash", "sh", "zsh", "cmd", "powershell", "pwsh", got the string "fish"/,
    );
    assert.throws(() => exec({ cmd: "ls", yield_time_ms: -5 }), /yield_time_ms must be at least 0, got -5/);
    assert.throws(
      () => poll({ session_id: 0, yield_time_ms: "soon" }),
      (error: Error) => {
        assert.match(error.message, /session_id must be at least 1/);
        assert.match(error.message, /yield_time_ms must be a number, got the string "soon"/);
        return true;
      },
    );
  });

  it("accepts Codex's max_output_tokens (an integer ≥ 1, both tools) and login (a boolean, exec_command)", () => {
    assert.deepEqual(exec({ cmd: "ls", max_output_tokens: 200, login: true }), { cmd: "ls", max_output_tokens: 200, login: true });
    assert.deepEqual(poll({ session_id: 3, max_output_tokens: 1 }), { session_id: 3, max_output_tokens: 1 });
    assert.throws(() => exec({ cmd: "ls", max_output_tokens: 0 }), /max_output_tokens must be at least 1, got 0/);
    assert.throws(() => poll({ session_id: 3, max_output_tokens: 2.5 }), /max_output_tokens must be an integer, got number 2.5/);
    assert.throws(() => exec({ cmd: "ls", login: "yes" }), /login must be true or false, got the string "yes"/);
    assert.throws(() => poll({ session_id: 3, login: true }), /write_stdin: unknown field "login"/);
  });

  it("treats null in an optional field as absent, and in a required one as missing", () => {
    assert.deepEqual(exec({ cmd: "ls", workdir: null, shell: null }), { cmd: "ls" });
    assert.throws(() => exec({ cmd: null }), /exec_command: cmd is required\./);
  });

  it("refuses something that is not an object", () => {
    assert.throws(() => exec("ls"), /exec_command expects an object of named arguments/);
    assert.throws(() => exec(null), /got null/);
  });
});
