import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ExecRequestError } from "../../../src/core/errors.ts";
import { prepareExec } from "../../../src/core/request.ts";

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
  ];
  for (const [what, params, message] of refusals) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => prepareExec(params, base, process.env),
        (error: Error) => error instanceof ExecRequestError && message.test(error.message),
      );
    });
  }
});
