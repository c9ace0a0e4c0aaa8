import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExecRequestError } from "../../../src/core/errors.ts";
import { findOnPath, resolveShell, shellArgs } from "../../../src/core/shell.ts";

// Synthetic file systems: a set of paths that are executable files.
const fakeFs = (...paths: string[]) => (path: string) => paths.includes(path);

describe("shell resolution", () => {
  it("finds the first match on PATH, in order", () => {
    assert.equal(findOnPath("bash", "/opt/bin:/usr/bin:/bin", fakeFs("/usr/bin/bash", "/bin/bash")), "/usr/bin/bash");
  });

  it("never searches relative or empty PATH entries (they would resolve against the workdir)", () => {
    const fs = fakeFs("bin/bash", "./bash", "bash", "/bin/bash");
    assert.equal(findOnPath("bash", "bin::.:/bin", fs), "/bin/bash");
    assert.equal(findOnPath("bash", "bin::.", fs), undefined);
  });

  it("resolves bash and sh to absolute paths on this machine", () => {
    for (const name of ["bash", "sh"]) {
      const shell = resolveShell(name, process.env.PATH);
      assert.equal(shell.name, name);
      assert.ok(shell.path.startsWith("/"), shell.path);
    }
  });

  it("rejects an unsupported shell, naming the accepted ones", () => {
    assert.throws(() => resolveShell("fish", "/bin", fakeFs("/bin/fish")), (error: Error) => {
      assert.ok(error instanceof ExecRequestError);
      assert.match(error.message, /Unsupported shell "fish"/);
      assert.match(error.message, /bash, sh/);
      return true;
    });
  });

  it("fails closed when a supported shell is not on PATH", () => {
    assert.throws(() => resolveShell("bash", "/nowhere", fakeFs()), /Shell "bash" was not found on PATH \(\/nowhere\)/);
  });

  it("passes the command as one argument after -c", () => {
    assert.deepEqual(shellArgs("echo 'a b' && ls"), ["-c", "echo 'a b' && ls"]);
  });
});
