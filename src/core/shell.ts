import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ExecRequestError } from "./errors.ts";

/** Shells a job may run under. Each takes the command as one argument after `-c`. */
export const SHELL_NAMES = ["bash", "sh"] as const;
export type ShellName = (typeof SHELL_NAMES)[number];
export const DEFAULT_SHELL: ShellName = "bash";

export interface ResolvedShell {
  name: ShellName;
  /** Absolute path of the executable, found before spawning. */
  path: string;
}

/** File-system probe, injectable so PATH lookup is testable with synthetic fixtures. */
export type IsExecutable = (path: string) => boolean;

export const isExecutableFile: IsExecutable = (path) => {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * First executable named `program` in the absolute entries of `pathValue`. Relative and empty entries
 * are skipped: they would resolve against the job's workdir, where an untrusted checkout could plant
 * a fake shell.
 */
export function findOnPath(program: string, pathValue: string | undefined, isExecutable: IsExecutable = isExecutableFile): string | undefined {
  for (const dir of (pathValue ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Validates a shell name and resolves it to an absolute path; refuses before anything is spawned. */
export function resolveShell(name: string, pathValue: string | undefined, isExecutable: IsExecutable = isExecutableFile): ResolvedShell {
  if (!(SHELL_NAMES as readonly string[]).includes(name)) {
    throw new ExecRequestError(`Unsupported shell "${name}". Use one of: ${SHELL_NAMES.join(", ")}.`);
  }
  const path = findOnPath(name, pathValue, isExecutable);
  if (!path) {
    throw new ExecRequestError(`Shell "${name}" was not found on PATH (${pathValue || "PATH is empty"}). Install it or pick another shell: ${SHELL_NAMES.join(", ")}.`);
  }
  return { name: name as ShellName, path };
}

/** Arguments that make the shell run `command` and exit. */
export function shellArgs(command: string): string[] {
  return ["-c", command];
}
