import { metadataLine } from "../../core/index.ts";

/** Pieces every result shares: the `key: value` header, bounded strings, durations. */

/** Header lines from an object whose key order is the reading order; `null` prints as `null`, a list joined (`none` when empty). */
export function headerLines(title: string, fields: Record<string, unknown>): string {
  const shown = (value: unknown) => (Array.isArray(value) ? (value.length > 0 ? value.join(", ") : "none") : (value ?? "null"));
  return [title, ...Object.entries(fields).map(([key, value]) => `${key}: ${shown(value)}`)].join("\n");
}

/** `text` cut to `limit` characters with an ellipsis, never between the halves of a surrogate pair. */
export function bounded(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const high = text.charCodeAt(limit - 1);
  return `${text.slice(0, high >= 0xd800 && high <= 0xdbff ? limit - 1 : limit)}…`;
}

/**
 * Metadata the model or the session reads (cwd, command, paths, reasons) as one line, never
 * interpreted: controls as `\e`, `\n`, `\xHH`; separators, bidi and invisible characters as `<U+XXXX>`.
 */
export const metadata = metadataLine;

/** A command on one line (see {@link metadata}), surrounding whitespace trimmed, bounded. */
export function oneLine(command: string, limit: number): string {
  // Escaping only lengthens text, so escaping a prefix of `limit + 1` characters bounds the same way.
  return bounded(metadataLine(command.trim().slice(0, limit + 1)), limit);
}

/** Seconds with millisecond precision. */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** A span for people: `4.2s`, `2m10s`, `3h05m`. */
export function shortDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
