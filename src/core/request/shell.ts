/*
 * Which shell runs a command, where its executable is, how it is told to run the command, and the
 * environment the job gets. What depends on the operating system takes the platform, environment and
 * file system as inputs, so the Windows rules are tested anywhere with synthetic PATHs.
 */
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, posix, win32 } from "node:path";
import { metadataLine } from "../output/visible-text.ts";
import { envKey } from "../shared/env-values.ts";
import { ExecRequestError } from "../shared/errors.ts";

export const SHELL_NAMES = ["bash", "sh", "zsh", "cmd", "powershell", "pwsh"] as const;
export type ShellName = (typeof SHELL_NAMES)[number];
export const DEFAULT_SHELL: ShellName = "bash";

/** Environment variable naming the bash to use on Windows, ahead of every probe. */
export const WINDOWS_BASH_ENV = "PI_UNIFIED_EXEC_BASH";

export interface ResolvedShell {
  name: ShellName;
  /** Absolute path of the executable, found before spawning. */
  path: string;
  /** Something the user should hear once (a fallback, a shell found off PATH). */
  notice?: string;
}

/** File-system probe, injectable so lookups are testable with synthetic fixtures. */
export type IsExecutable = (path: string) => boolean;

export const isExecutableFile: IsExecutable = (path) => {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, process.platform === "win32" ? fsConstants.F_OK : fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** What shell resolution depends on. */
export interface ShellHost {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  isExecutable: IsExecutable;
}

export const currentShellHost = (env: NodeJS.ProcessEnv = process.env): ShellHost => ({
  platform: process.platform,
  env,
  isExecutable: isExecutableFile,
});

/** Windows environment lookups are case-insensitive (`Path`, `PATH`). */
function envValue(env: NodeJS.ProcessEnv, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== "win32") return env[name];
  return env[envKey(env, name)];
}

/**
 * Every executable named `program` in the absolute entries of PATH, in order. Relative and empty
 * entries are skipped: they would resolve against the job's workdir, where an untrusted checkout could
 * plant a fake shell.
 */
function onPath(program: string, host: ShellHost): string[] {
  const path = host.platform === "win32" ? win32 : posix;
  const value = envValue(host.env, "PATH", host.platform) ?? "";
  const file = host.platform === "win32" && !program.toLowerCase().endsWith(".exe") ? `${program}.exe` : program;
  const found: string[] = [];
  for (const dir of value.split(host.platform === "win32" ? ";" : ":")) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, file);
    if (host.isExecutable(candidate)) found.push(candidate);
  }
  return found;
}

/**
 * Lookups on the real file system, by platform, program and PATH: walking every PATH entry cost
 * 0.3–0.6 ms per command. A changed PATH is another key; a hit is checked again (one stat), so a
 * shell removed since is looked up anew. Bounded: PATH values are few.
 */
const pathCache = new Map<string, string>();
const PATH_CACHE_ENTRIES = 32;

/** First executable named `program` on PATH (absolute entries only). */
export function findOnPath(program: string, host: ShellHost): string | undefined {
  if (host.isExecutable !== isExecutableFile) return onPath(program, host)[0];
  const key = `${host.platform}\0${program}\0${envValue(host.env, "PATH", host.platform) ?? ""}`;
  const cached = pathCache.get(key);
  if (cached !== undefined && host.isExecutable(cached)) return cached;
  const found = onPath(program, host)[0];
  if (found === undefined) return undefined;
  if (pathCache.size >= PATH_CACHE_ENTRIES) pathCache.clear();
  pathCache.set(key, found);
  return found;
}

/** System32's bash.exe is the WSL launcher: it runs the command inside a Linux distro, not Windows. */
function isWslLauncher(candidate: string, env: NodeJS.ProcessEnv): boolean {
  const systemRoot = envValue(env, "SystemRoot", "win32") ?? "C:\\Windows";
  const normalized = win32.normalize(candidate).toLowerCase();
  return ["System32", "Sysnative"].some((dir) => normalized === win32.join(systemRoot, dir, "bash.exe").toLowerCase());
}

/** `<GitRoot>\bin\bash.exe` from a git.exe in `<GitRoot>\cmd`, `<GitRoot>\bin` or `<GitRoot>\mingw64\bin`. */
function bashBesideGit(gitExe: string): string | undefined {
  const dir = win32.dirname(gitExe);
  const lower = dir.toLowerCase();
  let root: string | undefined;
  if (/[\\/]mingw(32|64)[\\/]bin$/.test(lower)) root = win32.dirname(win32.dirname(dir));
  else if (/[\\/](cmd|bin)$/.test(lower)) root = win32.dirname(dir);
  return root ? win32.join(root, "bin", "bash.exe") : undefined;
}

/**
 * Finds bash on Windows: the override variable, bash.exe on PATH (never the WSL launcher), Git for
 * Windows' `bin\bash.exe` derived from git.exe on PATH (its installer puts only `Git\cmd` there), then
 * the usual install folders. Git's `bin\bash.exe` is preferred over `usr\bin\bash.exe` because it sets
 * up the MSYS PATH, so `ls` and `grep` work in the job.
 */
export function probeWindowsBash(host: ShellHost): { path: string; offPath: boolean } | undefined {
  const override = envValue(host.env, WINDOWS_BASH_ENV, "win32");
  if (override && win32.isAbsolute(override) && host.isExecutable(override)) return { path: override, offPath: true };
  const onPathBash = onPath("bash", host).find((candidate) => !isWslLauncher(candidate, host.env));
  if (onPathBash) return { path: onPathBash, offPath: false };
  for (const git of onPath("git", host)) {
    const derived = bashBesideGit(git);
    if (derived && host.isExecutable(derived)) return { path: derived, offPath: true };
  }
  const roots = ["ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"].map((name) => envValue(host.env, name, "win32"));
  const localAppData = envValue(host.env, "LocalAppData", "win32");
  const installs = [...roots.map((root) => root && win32.join(root, "Git")), localAppData && win32.join(localAppData, "Programs", "Git")];
  for (const install of installs) {
    if (!install || !win32.isAbsolute(install)) continue;
    const candidate = win32.join(install, "bin", "bash.exe");
    if (host.isExecutable(candidate)) return { path: candidate, offPath: true };
  }
  return undefined;
}

/** Well-known locations of Windows shells that PATH may lack. */
function windowsFallback(name: ShellName, env: NodeJS.ProcessEnv): string | undefined {
  const systemRoot = envValue(env, "SystemRoot", "win32");
  const programFiles = envValue(env, "ProgramFiles", "win32");
  if (name === "cmd") return envValue(env, "ComSpec", "win32") ?? (systemRoot && win32.join(systemRoot, "System32", "cmd.exe"));
  if (name === "powershell") return systemRoot && win32.join(systemRoot, "System32", "WindowsPowerShell", "v1.0", "powershell.exe");
  if (name === "pwsh") return programFiles && win32.join(programFiles, "PowerShell", "7", "pwsh.exe");
  return undefined;
}

function lookup(name: ShellName, host: ShellHost): string | undefined {
  const found = findOnPath(name, host);
  if (found || host.platform !== "win32") return found;
  const fallback = windowsFallback(name, host.env);
  return fallback && win32.isAbsolute(fallback) && host.isExecutable(fallback) ? fallback : undefined;
}

/** Windows bash resolutions, cached per environment; each notice is given once. */
const windowsBashCache = new Map<string, ResolvedShell>();

function resolveWindowsBash(host: ShellHost): ResolvedShell {
  const key = JSON.stringify([
    envValue(host.env, WINDOWS_BASH_ENV, "win32"),
    envValue(host.env, "PATH", "win32"),
    envValue(host.env, "ProgramFiles", "win32"),
    envValue(host.env, "LocalAppData", "win32"),
  ]);
  const cached = windowsBashCache.get(key);
  if (cached) return { name: cached.name, path: cached.path };
  let resolved: ResolvedShell;
  const bash = probeWindowsBash(host);
  if (bash) {
    resolved = { name: "bash", path: bash.path, ...(bash.offPath ? { notice: `Using bash at ${bash.path} (it is not on PATH).` } : {}) };
  } else {
    const powershell = lookup("powershell", host);
    if (!powershell) {
      throw new ExecRequestError(
        `No bash was found (checked ${WINDOWS_BASH_ENV}, PATH, Git for Windows next to git.exe, and the usual install folders), ` +
          "and no Windows PowerShell either. Install Git for Windows, or set PI_UNIFIED_EXEC_BASH to a bash.exe.",
      );
    }
    resolved = {
      name: "powershell",
      path: powershell,
      notice:
        "No bash was found, so commands run in Windows PowerShell. Install Git for Windows or set PI_UNIFIED_EXEC_BASH " +
        "to a bash.exe to use bash.",
    };
  }
  windowsBashCache.set(key, resolved);
  return resolved;
}

/** Forgets cached lookups and Windows probes (tests start each case from scratch). */
export function clearShellCache(): void {
  windowsBashCache.clear();
  pathCache.clear();
}

/**
 * Validates a shell name and resolves it to an absolute path; refuses before anything is spawned.
 * `bashPath` is Pi's `shellPath` setting: like Pi's own bash tool, it replaces the bash lookup.
 */
export function resolveShell(name: string, host: ShellHost, bashPath?: string): ResolvedShell {
  if (!(SHELL_NAMES as readonly string[]).includes(name)) {
    throw new ExecRequestError(`Unsupported shell "${metadataLine(name)}". Use one of: ${SHELL_NAMES.join(", ")}.`);
  }
  const shell = name as ShellName;
  if (shell === "bash" && bashPath) {
    if (!host.isExecutable(bashPath))
      throw new ExecRequestError(`Pi's shellPath setting names ${metadataLine(bashPath)}, which is not an executable file.`);
    return { name: "bash", path: bashPath };
  }
  if (shell === "bash" && host.platform === "win32") return resolveWindowsBash(host);
  const path = lookup(shell, host);
  if (!path) {
    const pathValue = envValue(host.env, "PATH", host.platform);
    throw new ExecRequestError(
      `Shell "${shell}" was not found on PATH (${metadataLine(pathValue ?? "") || "PATH is empty"}). Install it or pick another shell.`,
    );
  }
  return { name: shell, path };
}

/** How the shell is told to run `command`. `verbatim`: pass the arguments to Windows unquoted. */
export interface ShellInvocation {
  args: string[];
  verbatim: boolean;
}

/** Shells that can start as a login shell (`-l`: the profile files run first, as in a terminal). */
export const LOGIN_SHELLS: readonly ShellName[] = ["bash", "zsh", "sh"];

/** `login`: start bash, zsh or sh as a login shell (the caller refuses it for the others). */
export function shellInvocation(shell: ShellName, command: string, login = false): ShellInvocation {
  switch (shell) {
    case "cmd":
      // As Node's own `shell: true` does: cmd strips the outer quotes (/s) and runs the rest as typed.
      return { args: ["/d", "/s", "/c", `"${command}"`], verbatim: true };
    case "powershell":
    case "pwsh":
      return { args: ["-NoProfile", "-NonInteractive", "-NoLogo", "-Command", command], verbatim: false };
    default:
      return { args: [login ? "-lc" : "-c", command], verbatim: false };
  }
}

export interface EnvironmentOptions {
  /** The job runs on a PTY rather than pipes. */
  tty: boolean;
  /** A directory to put first on PATH (Pi's `<agentDir>/bin`, where it keeps tools such as rg and fd). */
  binDir?: string;
}

/**
 * The environment a job runs with: the host's, plus what keeps a command from waiting on a human
 * nobody is there to be. A command can still set its own (`PAGER=less git log`).
 */
export function jobEnvironment(base: NodeJS.ProcessEnv, options: EnvironmentOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Key by key rather than `{ ...base }`: spreading `process.env` asks the environment for each
  // property's descriptor as well as its value, three times the cost (0.36 ms a call inside Pi).
  for (const key of Object.keys(base)) env[key] = base[key];
  // A pager would wait for a keypress nobody sends: `git log` would hang a build forever.
  env.PAGER = "cat";
  env.GIT_PAGER = "cat";
  env.GH_PAGER = "cat";
  if (options.tty) {
    // What the PTY emulates; programs pick their escape sequences from it.
    env.TERM = "xterm-256color";
  } else {
    // Without a terminal no editor can work; `git commit` or `git rebase -i` would block. (On a PTY
    // the model can drive an editor, so the user's stays.)
    env.GIT_EDITOR = ":";
    // Python holds a pipe's output in a block buffer until exit: a server or script would show nothing
    // while it runs. A value the user set (even empty) stays; a command's own assignment wins anyway.
    if (base[envKey(base, "PYTHONUNBUFFERED")] === undefined) env.PYTHONUNBUFFERED = "1";
  }
  if (options.binDir) {
    const pathKey = envKey(env, "PATH");
    const entries = (env[pathKey] ?? "").split(delimiter).filter(Boolean);
    if (!entries.includes(options.binDir)) env[pathKey] = [options.binDir, ...entries].join(delimiter);
  }
  return env;
}
