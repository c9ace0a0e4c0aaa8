/* A call's attachment window (clamped, or refused above the empty-poll cap) and `yield_until`'s strict UTC deadline. */
import {
  DEFAULT_EXEC_YIELD_MS,
  DEFAULT_WRITE_YIELD_MS,
  MAX_CONDITIONAL_EXEC_YIELD_MS,
  MAX_EMPTY_POLL_ENV,
  MAX_EMPTY_POLL_MS,
  MAX_YIELD_MS,
  MIN_EMPTY_POLL_MS,
  MIN_YIELD_MS,
} from "../shared/constants.ts";
import { wholeNumber } from "../shared/env-values.ts";
import { WaitRequestError } from "../shared/errors.ts";

/** A `write_stdin` with a condition and no window waits up to the longest write: 250 ms would end it before its line could come. */
export const DEFAULT_CONDITIONAL_WRITE_YIELD_MS = MAX_YIELD_MS;

/** A window in milliseconds, and the value the model asked for when it was clamped (a default is never "asked"). */
export interface Window {
  ms: number;
  requestedMs?: number;
}

function clamp(requested: number | undefined, fallback: number, min: number, max: number): Window {
  const asked = requested ?? fallback;
  const ms = Math.min(max, Math.max(min, asked));
  return ms === asked || requested === undefined ? { ms } : { ms, requestedMs: requested };
}

/** `exec_command`'s window, up to 300 s when a condition can end it early: a slow server's start is one call, not polls. */
export function execWindow(requested: number | undefined, conditional = false): Window {
  return clamp(requested, DEFAULT_EXEC_YIELD_MS, MIN_YIELD_MS, conditional ? MAX_CONDITIONAL_EXEC_YIELD_MS : MAX_YIELD_MS);
}

/** The window a `write_stdin` gets when the model names none: 250 ms, or 30 s when a condition can end it early. */
function writeDefault(conditional: boolean): number {
  return conditional ? DEFAULT_CONDITIONAL_WRITE_YIELD_MS : DEFAULT_WRITE_YIELD_MS;
}

/** A `write_stdin` window when it carries input: default 250 ms (30 s with a condition), clamped to [250 ms, 30 s]. */
export function inputWindow(requested: number | undefined, conditional = false): Window {
  return clamp(requested, writeDefault(conditional), MIN_YIELD_MS, MAX_YIELD_MS);
}

/**
 * The empty-poll cap: 290 s, or lower through the environment. Values below the 5 s floor are raised to
 * it; anything that is not a positive integer is ignored (a typo must not silently allow busy-polling).
 */
export function emptyPollCapMs(env: NodeJS.ProcessEnv): number {
  const value = wholeNumber(env[MAX_EMPTY_POLL_ENV]);
  return value === undefined ? MAX_EMPTY_POLL_MS : Math.min(MAX_EMPTY_POLL_MS, Math.max(MIN_EMPTY_POLL_MS, value));
}

/** An empty poll's window: at least 5 s (no busy-polling); above the cap refused, not clamped, so the model learns the limit. */
export function emptyPollWindow(requested: number | undefined, env: NodeJS.ProcessEnv, conditional = false): Window {
  const cap = emptyPollCapMs(env);
  if (requested !== undefined && requested > cap) {
    throw new WaitRequestError(
      `yield_time_ms ${requested} is above the ${cap} ms limit of an empty poll. Poll again with yield_time_ms ≤ ${cap}; ` +
        "the job keeps running between polls.",
    );
  }
  return clamp(requested, Math.min(writeDefault(conditional), cap), MIN_EMPTY_POLL_MS, cap);
}

/** `yield_until`: strict UTC, no offsets (a model computing local time would be hours off), real dates only (no 2026-02-30). */
const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{3}))?Z$/;

/** Epoch milliseconds of a `yield_until` value; throws a wait error (with `tool_time_utc`) otherwise. */
export function parseUtcDeadline(text: string): number {
  const match = RFC3339_UTC.exec(text);
  const refuse = (why: string) =>
    new WaitRequestError(
      `yield_until ${JSON.stringify(text)} ${why}. Use UTC as YYYY-MM-DDTHH:MM:SSZ (optionally .mmm before the Z), e.g. 2026-07-21T18:30:00Z.`,
    );
  if (!match) throw refuse("is not a strict RFC 3339 UTC timestamp");
  const [year, month, day, hour, minute, second, millis] = match.slice(1).map((part) => (part === undefined ? 0 : Number(part)));
  const epoch = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, millis!);
  const date = new Date(epoch);
  const real =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!real) throw refuse("is not a real date and time");
  return epoch;
}

/**
 * Converts a wall-clock deadline to the monotonic clock once, so a clock change (NTP, a manual
 * adjustment) during a long wait neither stretches nor shortens it.
 */
export function monotonicDeadline(epochMs: number, nowEpoch: number = Date.now(), nowMono: number = performance.now()): number {
  return nowMono + (epochMs - nowEpoch);
}
