import { compileWakePattern, cutAround, metadataLine } from "../core/index.ts";

/**
 * A matched line as a wake (and its TUI row) shows it: one inert line, cut to a window around what
 * the pattern matches, `…` where cut, so a long line never loses the very text that woke the model.
 * The core already cut the line around its match (≤ 300 characters); escaping may lengthen it and a
 * row has less room, so the window is found again here on the escaped text.
 */

/** Patterns compiled for windows, by source (a few per session; bounded). */
const compiled = new Map<string, ReturnType<typeof compileWakePattern>["regex"] | null>();
const MAX_COMPILED = 64;

function patternOf(source: string): ReturnType<typeof compileWakePattern>["regex"] | null {
  let pattern = compiled.get(source);
  if (pattern !== undefined) return pattern;
  try {
    pattern = compileWakePattern(source, "").regex;
  } catch {
    pattern = null; // a session file may hold anything: the window falls back to the middle
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(source, pattern);
  return pattern;
}

/**
 * `line` as one escaped line of at most `limit` characters around `pattern`'s match; where the match
 * is not found in the escaped text (an escape inside it), around the middle, where the core put it.
 */
export function matchWindow(line: string, pattern: string, limit: number): string {
  const inert = metadataLine(line);
  if (inert.length <= limit) return inert;
  const found = patternOf(pattern);
  if (found?.test(inert)) return found.excerpt(inert, limit);
  const middle = Math.floor(inert.length / 2);
  return cutAround(inert, middle, middle, limit);
}
