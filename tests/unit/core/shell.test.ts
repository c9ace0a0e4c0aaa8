import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import {
  clearShellCache,
  currentShellHost,
  findOnPath,
  probeWindowsBash,
  resolveShell,
  type ShellHost,
  shellInvocation,
} from "../../../src/core/request/shell.ts";
import { ExecRequestError } from "../../../src/core/shared/errors.ts";

/** A synthetic machine: the files that exist and are executable (case-insensitive on Windows). */
function host(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, files: string[]): ShellHost {
  const known = new Set(files.map((file) => (platform === "win32" ? file.toLowerCase() : file)));
  return { platform, env, isExecutable: (path) => known.has(platform === "win32" ? path.toLowerCase() : path) };
}

describe("shell resolution (POSIX)", () => {
  it("finds the first match on PATH, in order", () => {
    assert.equal(findOnPath("bash", host("linux", { PATH: "/opt/bin:/usr/bin:/bin" }, ["/usr/bin/bash", "/bin/bash"])), "/usr/bin/bash");
  });

  it("never searches relative or empty PATH entries (they would resolve against the workdir)", () => {
    const files = ["bin/bash", "./bash", "bash", "/bin/bash"];
    assert.equal(findOnPath("bash", host("linux", { PATH: "bin::.:/bin" }, files)), "/bin/bash");
    assert.equal(findOnPath("bash", host("linux", { PATH: "bin::." }, files)), undefined);
  });

  it("resolves bash and sh to absolute paths on this machine", () => {
    for (const name of ["bash", "sh"]) {
      const shell = resolveShell(name, currentShellHost());
      assert.equal(shell.name, name);
      assert.ok(shell.path.startsWith("/"), shell.path);
    }
  });

  it("resolves zsh like bash and sh", () => {
    assert.deepEqual(resolveShell("zsh", host("darwin", { PATH: "/bin" }, ["/bin/zsh"])), { name: "zsh", path: "/bin/zsh" });
  });

  it("rejects an unsupported shell, naming the accepted ones", () => {
    assert.throws(
      () => resolveShell("fish", host("linux", { PATH: "/bin" }, ["/bin/fish"])),
      (error: Error) => {
        assert.ok(error instanceof ExecRequestError);
        assert.match(error.message, /Unsupported shell "fish"\. Use one of: bash, sh, zsh, cmd, powershell, pwsh\./);
        return true;
      },
    );
  });

  it("fails closed when a supported shell is not on PATH", () => {
    assert.throws(() => resolveShell("zsh", host("linux", { PATH: "/nowhere" }, [])), /Shell "zsh" was not found on PATH \(\/nowhere\)/);
  });

  it("uses Pi's shellPath setting for bash, and refuses one that does not exist", () => {
    const machine = host("linux", { PATH: "/bin" }, ["/bin/bash", "/opt/bash5/bin/bash"]);
    assert.deepEqual(resolveShell("bash", machine, "/opt/bash5/bin/bash"), { name: "bash", path: "/opt/bash5/bin/bash" });
    assert.equal(
      resolveShell("sh", host("linux", { PATH: "/bin" }, ["/bin/sh"]), "/opt/bash5/bin/bash").path,
      "/bin/sh",
      "only bash follows it",
    );
    assert.throws(
      () => resolveShell("bash", machine, "/missing/bash"),
      /shellPath setting names \/missing\/bash, which is not an executable file/,
    );
  });

  it("builds each shell's arguments", () => {
    assert.deepEqual(shellInvocation("bash", "echo 'a b' && ls"), { args: ["-c", "echo 'a b' && ls"], verbatim: false });
    assert.deepEqual(shellInvocation("zsh", "x"), { args: ["-c", "x"], verbatim: false });
    assert.deepEqual(shellInvocation("zsh", "x", true), { args: ["-lc", "x"], verbatim: false }, "a login shell");
    assert.deepEqual(shellInvocation("cmd", 'echo "hi" & dir'), { args: ["/d", "/s", "/c", '"echo "hi" & dir"'], verbatim: true });
    assert.deepEqual(shellInvocation("pwsh", "Get-Date"), {
      args: ["-NoProfile", "-NonInteractive", "-NoLogo", "-Command", "Get-Date"],
      verbatim: false,
    });
  });
});

// Windows-logic tests: the Windows rules run here on synthetic PATHs and file systems.
describe("shell resolution (Windows logic, synthetic file system)", () => {
  const base = { SystemRoot: "C:\\Windows", ProgramFiles: "C:\\Program Files", LocalAppData: "C:\\Users\\me\\AppData\\Local" };
  const powershell = "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe";
  beforeEach(() => clearShellCache());

  it("the override variable wins", () => {
    const machine = host("win32", { ...base, PI_UNIFIED_EXEC_BASH: "D:\\tools\\bash.exe", Path: "C:\\Git\\bin" }, [
      "D:\\tools\\bash.exe",
      "C:\\Git\\bin\\bash.exe",
    ]);
    assert.equal(probeWindowsBash(machine)?.path, "D:\\tools\\bash.exe");
  });

  it("takes bash.exe from PATH but never System32's WSL launcher", () => {
    const machine = host("win32", { ...base, Path: "C:\\Windows\\System32;C:\\msys64\\usr\\bin" }, [
      "C:\\Windows\\System32\\bash.exe",
      "C:\\msys64\\usr\\bin\\bash.exe",
    ]);
    assert.deepEqual(probeWindowsBash(machine), { path: "C:\\msys64\\usr\\bin\\bash.exe", offPath: false });
    const onlyWsl = host("win32", { ...base, Path: "C:\\Windows\\System32" }, ["C:\\Windows\\System32\\bash.exe"]);
    assert.equal(probeWindowsBash(onlyWsl), undefined);
  });

  it("derives <GitRoot>\\bin\\bash.exe from git.exe on PATH (Git\\cmd, mingw64\\bin)", () => {
    for (const gitDir of ["D:\\Git\\cmd", "D:\\Git\\mingw64\\bin"]) {
      const machine = host("win32", { ...base, Path: gitDir }, [
        `${gitDir}\\git.exe`,
        "D:\\Git\\bin\\bash.exe",
        "D:\\Git\\usr\\bin\\bash.exe",
      ]);
      assert.deepEqual(probeWindowsBash(machine), { path: "D:\\Git\\bin\\bash.exe", offPath: true }, gitDir);
    }
  });

  it("looks in the usual install folders", () => {
    const machine = host("win32", { ...base, Path: "" }, ["C:\\Users\\me\\AppData\\Local\\Programs\\Git\\bin\\bash.exe"]);
    assert.equal(probeWindowsBash(machine)?.path, "C:\\Users\\me\\AppData\\Local\\Programs\\Git\\bin\\bash.exe");
  });

  it("falls back to powershell with a notice given once, and caches the probe", () => {
    let probes = 0;
    const machine: ShellHost = {
      platform: "win32",
      env: { ...base, Path: "C:\\Windows\\System32" },
      isExecutable: (path) => {
        probes++;
        return path.toLowerCase() === powershell.toLowerCase();
      },
    };
    const first = resolveShell("bash", machine);
    assert.equal(first.name, "powershell");
    assert.equal(first.path, powershell);
    assert.match(first.notice ?? "", /No bash was found, so commands run in Windows PowerShell/);
    const seen = probes;
    const second = resolveShell("bash", machine);
    assert.deepEqual(second, { name: "powershell", path: powershell }, "no second notice");
    assert.equal(probes, seen, "cached");
  });

  it("says once where an off-PATH bash was found", () => {
    const machine = host("win32", { ...base, Path: "" }, ["C:\\Program Files\\Git\\bin\\bash.exe"]);
    assert.match(resolveShell("bash", machine).notice ?? "", /Using bash at C:\\Program Files\\Git\\bin\\bash\.exe/);
    assert.equal(resolveShell("bash", machine).notice, undefined);
  });

  it("resolves cmd, powershell and pwsh to absolute paths, PATH first, then their usual homes", () => {
    const machine = host("win32", { ...base, Path: "C:\\Windows\\System32", ComSpec: "C:\\Windows\\System32\\cmd.exe" }, [
      "C:\\Windows\\System32\\cmd.exe",
      powershell,
      "C:\\Program Files\\PowerShell\\7\\pwsh.exe",
    ]);
    assert.equal(resolveShell("cmd", machine).path, "C:\\Windows\\System32\\cmd.exe");
    assert.equal(resolveShell("powershell", machine).path, powershell);
    assert.equal(resolveShell("pwsh", machine).path, "C:\\Program Files\\PowerShell\\7\\pwsh.exe");
  });

  it("never takes a shell from a relative PATH entry (the workdir)", () => {
    const machine = host("win32", { ...base, Path: ".;tools" }, [".\\cmd.exe", "tools\\cmd.exe"]);
    assert.throws(() => resolveShell("cmd", machine), /Shell "cmd" was not found on PATH/);
  });

  it("reads Path case-insensitively, as Windows does", () => {
    const machine = host("win32", { ...base, pAtH: "C:\\bin" }, ["C:\\bin\\zsh.exe"]);
    assert.equal(resolveShell("zsh", machine).path, "C:\\bin\\zsh.exe");
  });
});
