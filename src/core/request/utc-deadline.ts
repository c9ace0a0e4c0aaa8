import { WaitRequestError } from "../shared/errors.ts";

/**
 * Strict RFC 3339 UTC timestamps for `yield_until`: `YYYY-MM-DDTHH:MM:SSZ` with optional `.mmm`,
 * an uppercase `Z`, no offsets (a model that computes local time would be hours off), and real
 * calendar dates (`2026-02-30` is refused, not rolled over into March).
 */
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
