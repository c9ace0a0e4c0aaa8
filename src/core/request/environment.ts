import { delimiter } from "node:path";
import { envKey } from "../shared/env-values.ts";

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
