import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { prepareExec } from "../../../src/core/request/request.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

describe("prepareExec", () => {
  const base = mkdtempSync(join(tmpdir(), "piue-request-"));
  writeFileSync(join(base, "file.txt"), "");

  it("resolves a relative workdir against the turn cwd", () => {
    assert.equal(prepareExec({ cmd: "true", workdir: "." }, base, process.env).cwd, base);
  });

  const refusals: [string, Parameters<typeof prepareExec>[0], RegExp][] = [
    ["an empty command", { cmd: "  " }, /cmd is empty/],
    ["a NUL in the command", { cmd: "echo a\0b" }, /NUL/],
    ["a missing workdir, naming it", { cmd: "true", workdir: "nope/deeper" }, new RegExp(`workdir does not exist: ${base}/nope/deeper`)],
    ["a workdir that is a file", { cmd: "true", workdir: "file.txt" }, /workdir is not a directory/],
    ["an unsupported shell", { cmd: "true", shell: "fish" }, /Unsupported shell "fish"/],
    [
      "login for cmd, before looking the shell up",
      { cmd: "dir", shell: "cmd", login: true },
      /login: true .* only bash, zsh, sh .* in cmd/,
    ],
    ["login for powershell", { cmd: "ls", shell: "powershell", login: true }, /in powershell\. Omit login/],
    ["login for pwsh", { cmd: "ls", shell: "pwsh", login: true }, /in pwsh\. Omit login .* Nothing was started/],
  ];
  it("login: true runs bash, zsh and sh with -lc; false or absent with -c", () => {
    assert.deepEqual(prepareExec({ cmd: "echo hi", login: true }, base, process.env).invocation.args, ["-lc", "echo hi"]);
    assert.deepEqual(prepareExec({ cmd: "echo hi", shell: "sh", login: true }, base, process.env).invocation.args, ["-lc", "echo hi"]);
    assert.deepEqual(prepareExec({ cmd: "echo hi", login: false }, base, process.env).invocation.args, ["-c", "echo hi"]);
    assert.deepEqual(prepareExec({ cmd: "echo hi" }, base, process.env).invocation.args, ["-c", "echo hi"]);
  });

  for (const [what, params, message] of refusals) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => prepareExec(params, base, process.env),
        (error: Error) => error instanceof ExecRequestError && message.test(error.message),
      );
    });
  }
});
