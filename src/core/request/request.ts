/*
 * request/ — a call checked and resolved before anything runs. The flow at a glance:
 * 1. `prepareExec` / `prepareWrite` (this file) refuse a bad call with a message, before any side effect.
 * 2. `shell.ts` finds the shell and builds its arguments and the job's environment.
 * 3. `input.ts` turns `chars` (escapes) or `chars_b64` into the bytes to send.
 * 4. `wait-policy.ts` sets the attachment window (or `yield_until`'s deadline).
 *
 * May import: shared, output, screen, patterns, wait, transport.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { metadataLine } from "../output/visible-text.ts";
import { compileUntilPattern, type LinePattern } from "../patterns/line-pattern.ts";
import { type TerminalSize, terminalSize } from "../screen/terminal-size.ts";
import { MODEL_SECRETS_ENV } from "../shared/constants.ts";
import { ExecRequestError, WaitRequestError } from "../shared/errors.ts";
import { type LoadedPty, loadPtyModule } from "../transport/pty.ts";
import type { UntilSpec } from "../wait/call-wait.ts";
import { checkUntilListening } from "../wait/listen-watch.ts";
import { checkQuietMs } from "../wait/quiet-watch.ts";
import { type JobInput, parseInput } from "./input.ts";
import {
  currentShellHost,
  DEFAULT_SHELL,
  jobEnvironment,
  LOGIN_SHELLS,
  type ResolvedShell,
  resolveShell,
  type ShellHost,
  type ShellInvocation,
  shellInvocation,
} from "./shell.ts";
import { emptyPollWindow, execWindow, inputWindow, monotonicDeadline, parseUtcDeadline, type Window } from "./wait-policy.ts";

/** A job's hard deadline when the model gives none (a big build fits, nothing runs forever), and the longest (a day). */
export const DEFAULT_TIMEOUT_S = 1_800;
export const MAX_TIMEOUT_S = 86_400;
/** `ask_user`: the model's words for the user, one line they read at a glance. */
export const MAX_ASK_USER_CHARS = 300;

/** `exec_command`'s parameters as the model gave them (types already checked by the tool layer). */
export interface ExecParams {
  cmd: string;
  workdir?: string;
  shell?: string;
  tty?: boolean;
  cols?: number;
  rows?: number;
  yield_time_ms?: number;
  timeout_s?: number;
  until_pattern?: string;
  until_quiet_ms?: number;
  /** `true`: a new listening address; a port: that port (`false` is no condition). */
  until_listening?: boolean | number | string;
  /** Codex's parameter: run bash, zsh or sh as a login shell. */
  login?: boolean;
  screen?: boolean;
  wake_on_pattern?: string;
}

/** What the host contributes, like Pi's own bash tool: its shell settings and its tool directory. */
export interface HostShellSettings {
  /** Pi's `shellPath` setting: the bash to use. */
  bashPath?: string;
  /** Pi's `shellCommandPrefix` setting: a line run before every bash command (aliases, shopt). */
  commandPrefix?: string;
  /** Pi's `<agentDir>/bin`, put first on PATH. */
  binDir?: string;
}

/** A request the runtime can spawn without further checks. */
export interface ExecRequest {
  /** The command as the model wrote it. */
  command: string;
  /** Absolute, existing directory. */
  cwd: string;
  shell: ResolvedShell;
  /** The shell's arguments, with Pi's command prefix applied for bash. */
  invocation: ShellInvocation;
  /** The job's whole environment. */
  env: NodeJS.ProcessEnv;
  /** PTY size for `tty: true`; pipes when absent. */
  terminal?: TerminalSize;
  /** The PTY module, loaded (once, here) for `tty: true`. */
  pty?: LoadedPty;
  window: Window;
  /** Hard deadline after spawn. */
  timeoutMs: number;
  /** A conditional wait: return once a line matches or the job goes quiet. */
  until?: UntilSpec;
  /** `screen` as given (PTY only): true the screen, false the stream, absent the screen on the alternate screen. */
  screen?: boolean;
  /** `wake_on_pattern`: a later line that matches tells the model, at its level. */
  wakePattern?: WakePattern;
}

/** `wake_on_pattern` as armed: the expression, and how loud its notice is (`next_turn:` written first). */
export interface WakePattern {
  regex: LinePattern;
  level: "wake" | "next_turn";
}

/** What `wake_on_pattern` starts with to ride with the next turn instead of starting one. */
const NEXT_TURN_PREFIX = "next_turn:";

/** A pattern as the model writes it, its level included. */
export function writtenWakePattern(source: string, level: "wake" | "next_turn"): string {
  return level === "next_turn" ? `${NEXT_TURN_PREFIX}${source}` : source;
}

/**
 * `wake_on_pattern`, checked by the rules of `until_pattern` before anything is spawned or changed;
 * a `next_turn:` prefix sets its level. `untouched` ends each refusal: what did not happen.
 */
export function compileWakePattern(written: string, untouched: string): WakePattern {
  const level = written.startsWith(NEXT_TURN_PREFIX) ? "next_turn" : "wake";
  const source = level === "next_turn" ? written.slice(NEXT_TURN_PREFIX.length) : written;
  if (source === "") {
    throw new ExecRequestError(
      `wake_on_pattern is empty. Give a regular expression for the lines that should wake you, e.g. \`ERROR|panic\` (\`(?i)error\` ignores case). ${untouched}`,
    );
  }
  return { regex: compileUntilPattern(source, { name: "wake_on_pattern", untouched }), level };
}

function existingDirectory(turnCwd: string, workdir: string | undefined): string {
  const cwd = resolve(turnCwd, workdir ?? ".");
  let isDirectory: boolean;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const shown = metadataLine(cwd); // the model reads it: a crafted workdir must not add lines to the error
    throw new ExecRequestError(
      code === "ENOENT"
        ? `workdir does not exist: ${shown}`
        : `workdir cannot be used: ${shown} (${metadataLine((error as Error).message)})`,
    );
  }
  if (!isDirectory) throw new ExecRequestError(`workdir is not a directory: ${metadataLine(cwd)}`);
  return cwd;
}

/**
 * Checks and resolves a command before it is spawned, so a bad request fails clearly and leaves
 * nothing behind: a command, an existing workdir (relative to the turn's cwd), a shell found, and for
 * `tty: true` the PTY module loaded.
 */
export function prepareExec(
  params: ExecParams,
  turnCwd: string,
  env: NodeJS.ProcessEnv,
  settings: HostShellSettings = {},
  shellHost: ShellHost = currentShellHost(env),
): ExecRequest {
  if (params.cmd.trim() === "") throw new ExecRequestError("cmd is empty: give the shell command to run.");
  // The OS passes arguments as C strings; Node would refuse the spawn with a less helpful message.
  if (params.cmd.includes("\0")) throw new ExecRequestError("cmd contains a NUL character, which no shell command can carry.");
  const timeoutS = params.timeout_s ?? DEFAULT_TIMEOUT_S;
  if (!Number.isInteger(timeoutS) || timeoutS < 1 || timeoutS > MAX_TIMEOUT_S) {
    throw new ExecRequestError(
      `timeout_s must be a whole number of seconds from 1 to ${MAX_TIMEOUT_S}, got ${params.timeout_s}. Nothing was started.`,
    );
  }
  const until = untilSpec(params, "Nothing was started.");
  const wakePattern = params.wake_on_pattern === undefined ? undefined : compileWakePattern(params.wake_on_pattern, "Nothing was started.");
  if (params.screen === true && params.tty !== true) {
    throw new ExecRequestError(
      "screen: true returns a terminal's screen, but this command would run on pipes: add tty: true to run it on a terminal " +
        "(full-screen programs such as vim, less or top need one), or leave screen out to get its output. Nothing was started.",
    );
  }
  const cwd = existingDirectory(turnCwd, params.workdir);
  if (params.login === true) checkLoginShell(params.shell ?? DEFAULT_SHELL);
  const shell = resolveShell(params.shell ?? DEFAULT_SHELL, shellHost, settings.bashPath);
  // Windows may stand PowerShell in for a missing bash.
  if (params.login === true) checkLoginShell(shell.name);
  const tty = params.tty === true;
  const pty = tty ? loadPtyModule(env) : undefined;
  const script = shell.name === "bash" && settings.commandPrefix ? `${settings.commandPrefix}\n${params.cmd}` : params.cmd;
  return {
    command: params.cmd,
    cwd,
    shell,
    invocation: shellInvocation(shell.name, script, params.login === true),
    env: jobEnvironment(env, { tty, ...(settings.binDir ? { binDir: settings.binDir } : {}) }),
    ...(pty ? { terminal: terminalSize(params.cols, params.rows), pty } : {}),
    window: execWindow(params.yield_time_ms, until !== undefined),
    timeoutMs: timeoutS * 1000,
    ...(until ? { until } : {}),
    ...(params.screen !== undefined ? { screen: params.screen } : {}),
    ...(wakePattern ? { wakePattern } : {}),
  };
}

/** `login: true` is for shells that have a login mode; refused before anything runs. */
function checkLoginShell(name: string): void {
  if ((LOGIN_SHELLS as readonly string[]).includes(name)) return;
  throw new ExecRequestError(
    `login: true starts a login shell, which only ${LOGIN_SHELLS.join(", ")} have; this command would run in ${metadataLine(name)}. ` +
      "Omit login (or set it to false), or pick one of those shells. Nothing was started.",
  );
}

/** `write_stdin`'s parameters as the model gave them (types already checked by the tool layer). */
export interface WriteParams {
  session_id: number;
  chars?: string;
  chars_b64?: string;
  cols?: number;
  rows?: number;
  yield_time_ms?: number;
  yield_until?: string;
  until_pattern?: string;
  until_quiet_ms?: number;
  until_listening?: boolean | number | string;
  screen?: boolean;
  ask_user?: string;
}

/** A `write_stdin` the runtime can run: what to send, what to resize, and for how long to stay. */
export interface WriteRequest {
  jobId: number;
  input?: JobInput;
  resize?: { cols?: number; rows?: number };
  window: Window;
  /** For an absolute wait: its deadline as UTC, to say in the result. */
  absoluteUntil?: string;
  /** A conditional wait: return once a line matches or the job goes quiet. */
  until?: UntilSpec;
  /** `screen` as given: true the screen (PTY jobs only), false the stream, absent the screen on the alternate screen. */
  screen?: boolean;
  /** `ask_user`: the user types into the job instead of the model; the model's words for them. */
  askUser?: { question: string };
  /** The person allows the model to type into a prompt that hides what is typed (`PI_UNIFIED_EXEC_MODEL_SECRETS=allow`). */
  modelTypesSecrets?: true;
}

/**
 * Checks a `write_stdin` before anything is written. The window follows the kind of call: input or a
 * resize (the program redraws), an empty poll (at least 5 s, above its cap an error), or `yield_until`
 * (alone, a strict UTC time converted once to the monotonic clock).
 */
export function prepareWrite(params: WriteParams, env: NodeJS.ProcessEnv): WriteRequest {
  if (params.ask_user !== undefined) return prepareAskUser(params);
  const input = parseInput(params.chars, params.chars_b64);
  const resize = params.cols !== undefined || params.rows !== undefined ? { cols: params.cols, rows: params.rows } : undefined;
  if (params.yield_until !== undefined && (input || resize || params.yield_time_ms !== undefined || params.until_quiet_ms !== undefined)) {
    throw new WaitRequestError(
      "yield_until is for an empty poll only: it cannot be combined with yield_time_ms, chars, chars_b64, cols, rows or until_quiet_ms " +
        "(until_pattern may go with it: an absolute wait for a line). Nothing was written.",
    );
  }
  const until = untilSpec(params, "Nothing was written.");
  const request = {
    jobId: params.session_id,
    ...(input ? { input } : {}),
    ...(resize ? { resize } : {}),
    ...(until ? { until } : {}),
    ...(params.screen !== undefined ? { screen: params.screen } : {}),
    ...(env[MODEL_SECRETS_ENV]?.trim() === "allow" ? { modelTypesSecrets: true as const } : {}),
  };
  if (params.yield_until !== undefined) {
    const epoch = parseUtcDeadline(params.yield_until);
    const ms = Math.max(0, monotonicDeadline(epoch) - performance.now());
    return { ...request, window: { ms }, absoluteUntil: new Date(epoch).toISOString() };
  }
  const conditional = until !== undefined;
  return {
    ...request,
    window: input || resize ? inputWindow(params.yield_time_ms, conditional) : emptyPollWindow(params.yield_time_ms, env, conditional),
  };
}

/** `ask_user`: the user's typing is the input, so no `chars`, `chars_b64`, resize or absolute wait beside it. */
function prepareAskUser(params: WriteParams): WriteRequest {
  const question = params.ask_user!;
  const chars = [...question].length;
  if (chars < 1 || chars > MAX_ASK_USER_CHARS) {
    throw new ExecRequestError(
      `ask_user is ${chars} characters long; give 1 to ${MAX_ASK_USER_CHARS}: what the user should type, in a line they can read (e.g. "Enter the passphrase for ~/.ssh/id_ed25519"). Nothing was asked or written.`,
    );
  }
  // `chars: ""` (and `chars_b64: ""`) is the parameters' default, which models send with every call: no input of their own.
  const beside = (["chars", "chars_b64", "cols", "rows", "yield_until"] as const).filter(
    (key) => params[key] !== undefined && params[key] !== "",
  );
  if (beside.length > 0) {
    throw new ExecRequestError(
      `ask_user cannot go with ${beside.join(", ")}: the user's typing is this call's input; send your own input in another call. Nothing was asked or written.`,
    );
  }
  const until = untilSpec(params, "Nothing was asked or written.");
  return {
    jobId: params.session_id,
    askUser: { question },
    ...(until ? { until } : {}),
    ...(params.screen !== undefined ? { screen: params.screen } : {}),
    window: inputWindow(params.yield_time_ms, until !== undefined),
  };
}

/** `screen: true` on a job that runs on pipes is refused before anything is written: there is no screen to show. */
export function refuseScreenOnPipes(request: WriteRequest, tty: boolean): void {
  if (request.screen !== true || tty) return;
  throw new ExecRequestError(
    `screen: true returns a terminal's screen, but session ${request.jobId} runs on pipes (it was started without tty: true), ` +
      "so its output is the stream: leave screen out. Nothing was written.",
  );
}

/** The conditions of a conditional wait, checked before anything runs; undefined when there are none. */
function untilSpec(
  params: { until_pattern?: string; until_quiet_ms?: number; until_listening?: boolean | number | string },
  untouched: string,
): UntilSpec | undefined {
  const pattern = params.until_pattern !== undefined ? compileUntilPattern(params.until_pattern) : undefined;
  const quietMs = params.until_quiet_ms !== undefined ? checkQuietMs(params.until_quiet_ms) : undefined;
  const listening = checkUntilListening(params.until_listening, untouched);
  if (!pattern && quietMs === undefined && !listening) return undefined;
  return { ...(pattern ? { pattern } : {}), ...(quietMs !== undefined ? { quietMs } : {}), ...(listening ? { listening } : {}) };
}
