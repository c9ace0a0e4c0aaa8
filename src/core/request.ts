import { statSync } from "node:fs";
import { resolve } from "node:path";
import { ExecRequestError } from "./errors.ts";
import { DEFAULT_SHELL, resolveShell, type ResolvedShell } from "./shell.ts";
import { execWindow, type Window } from "./wait-policy.ts";

/** `exec_command`'s parameters as the model gave them (types already checked by the tool layer). */
export interface ExecParams {
  cmd: string;
  workdir?: string;
  shell?: string;
  yield_time_ms?: number;
}

/** A request the runtime can spawn without further checks. */
export interface ExecRequest {
  command: string;
  /** Absolute, existing directory. */
  cwd: string;
  shell: ResolvedShell;
  window: Window;
  env: NodeJS.ProcessEnv;
}

/**
 * Checks and resolves everything about a command before it is spawned, so a bad request fails with a
 * clear message and leaves nothing behind: the command is not blank, the workdir exists and is a
 * directory (relative paths resolve against the turn's cwd), the shell is supported and found.
 */
export function prepareExec(params: ExecParams, turnCwd: string, env: NodeJS.ProcessEnv): ExecRequest {
  if (params.cmd.trim() === "") throw new ExecRequestError("cmd is empty: give the shell command to run.");
  // The OS passes arguments as C strings; Node would refuse the spawn with a less helpful message.
  if (params.cmd.includes("\0")) throw new ExecRequestError("cmd contains a NUL character, which no shell command can carry.");
  const cwd = resolve(turnCwd, params.workdir ?? ".");
  let isDirectory: boolean;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ExecRequestError(
      code === "ENOENT" ? `workdir does not exist: ${cwd}` : `workdir cannot be used: ${cwd} (${(error as Error).message})`,
    );
  }
  if (!isDirectory) throw new ExecRequestError(`workdir is not a directory: ${cwd}`);
  return {
    command: params.cmd,
    cwd,
    shell: resolveShell(params.shell ?? DEFAULT_SHELL, env.PATH),
    window: execWindow(params.yield_time_ms),
    env,
  };
}
