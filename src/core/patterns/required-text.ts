/**
 * What a line must contain for a pattern to match it, read off the pattern, so plain lines that
 * cannot match are passed over at `memchr` speed instead of being rendered and tested (a 32 MB flood
 * under `(?i)error|fatal|panic`: 5 400 MB per CPU second with the pass-over, 107 without).
 */
import { isAscii } from "node:buffer";
import { RE2JS } from "re2js";
import { classEnd, groupEnd } from "./pattern-cost.ts";

/**
 * Per top-level alternative, the longest run of plain characters it requires (outside groups,
 * classes, escapes that are not a literal, optional repeats); none when an alternative requires no
 * run or flags change midway. Under a leading `(?i)` a character stands for every ASCII character RE2
 * folds it with (asked of RE2). A necessary condition only: rendering ASCII without ESC or CR only
 * drops characters, so a character absent from the bytes is absent from the text.
 */
export interface RequiredText {
  /** Per alternative: the characters to look for, rarest first (each with its other case under `(?i)`). */
  readonly alternatives: readonly (readonly CharVariants[])[];
}

/** One character as code points to search for: itself, and under `(?i)` every ASCII character RE2 folds it with. */
export type CharVariants = readonly number[];

/** How many characters of one run are looked for in a chunk before the chunk is tested in full. */
const MAX_CHARS_TRIED = 3;

/**
 * Characters ordered from likely to rare in program output (the rarest is tried first). Space and
 * TAB are never looked for: rendering may write spaces of its own (an erase), so their absence from
 * the bytes proves nothing.
 */
const COMMON = " etaoinsrhldcumfpgwybvkxjqz0123456789_-./:=,";

/** The runs of plain characters `source` requires, one per top-level alternative; undefined when there is none for some alternative. */
export function requiredText(source: string): RequiredText | undefined {
  let body = source;
  let ignoreCase = false;
  const flags = /^\(\?([imsU]+)\)/.exec(body);
  if (flags) {
    ignoreCase = flags[1]!.includes("i");
    body = body.slice(flags[0].length);
  }
  body = unwrapGroup(body);
  const runs = alternativeRuns(body);
  if (!runs || runs.some((run) => run.length === 0)) return undefined;
  return { alternatives: runs.map((run) => charsToTry(run, ignoreCase)) };
}

/** `(a|b)`, `(?:a|b)` or `(?P<name>a|b)` as a whole pattern: its content (repeatedly). */
function unwrapGroup(body: string): string {
  while (body.startsWith("(") && groupEnd(body, 0) === body.length) {
    const open = /^\((?:\?:|\?P?<[A-Za-z_][A-Za-z0-9_]*>)?/.exec(body)![0];
    if (body.startsWith("(?") && open === "(") return body; // a flag group or an unknown construct
    body = body.slice(open.length, -1);
  }
  return body;
}

/** The longest required run of each top-level alternative, or undefined for a construct not understood. */
function alternativeRuns(body: string): string[] | undefined {
  const runs: string[] = [];
  let best = "";
  let run = "";
  const endRun = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let k = 0; k < body.length; ) {
    const c = body[k]!;
    if (c === "|") {
      endRun();
      runs.push(best);
      best = "";
      k++;
      continue;
    }
    const atom = atomAt(body, k);
    if (!atom) return undefined;
    k = atom.end;
    const quantifier = quantifierAt(body, k);
    k = quantifier.end;
    if (atom.literal === undefined) {
      endRun();
      continue;
    }
    if (quantifier.min === 0) {
      endRun();
      continue;
    }
    run += atom.literal;
    if (quantifier.repeats) endRun();
  }
  endRun();
  runs.push(best);
  return runs;
}

/** One atom at `k`: a literal character (`literal`), or something else; undefined for what is not understood. */
function atomAt(body: string, k: number): { end: number; literal?: string } | undefined {
  const c = body[k]!;
  if (c === "\\") {
    const next = body[k + 1];
    if (next === undefined || next === "Q" || next === "E") return undefined;
    // An escaped punctuation character stands for itself; letters and digits are classes or codes.
    if (!/[A-Za-z0-9]/.test(next)) return { end: k + 2, literal: next };
    if ((next === "p" || next === "P" || next === "x") && body[k + 2] === "{") {
      const close = body.indexOf("}", k + 3);
      return close === -1 ? undefined : { end: close + 1 };
    }
    if (next === "x") return { end: k + 4 };
    return { end: k + 2 };
  }
  if (c === "[") return { end: classEnd(body, k) };
  if (c === "(") {
    // A flag switch midway (`a(?i)b`) changes what later characters mean: not understood.
    if (/^\(\?[imsU-]+\)/.test(body.slice(k))) return undefined;
    return { end: groupEnd(body, k) };
  }
  if (c === ")" || c === "*" || c === "+" || c === "?" || c === "{") return undefined;
  if (c === "." || c === "^" || c === "$") return { end: k + 1 };
  const code = body.codePointAt(k)!;
  const length = code > 0xffff ? 2 : 1;
  return { end: k + length, literal: body.slice(k, k + length) };
}

/** A repeat after an atom: how often the atom must occur at least, and whether it may occur more than once. */
function quantifierAt(body: string, k: number): { end: number; min: number; repeats: boolean } {
  const c = body[k];
  let result: { end: number; min: number; repeats: boolean };
  if (c === "*") result = { end: k + 1, min: 0, repeats: true };
  else if (c === "+") result = { end: k + 1, min: 1, repeats: true };
  else if (c === "?") result = { end: k + 1, min: 0, repeats: false };
  else if (c === "{") {
    const counted = /^\{(\d*)(,?)(\d*)\}/.exec(body.slice(k));
    if (!counted) return { end: k, min: 1, repeats: false }; // a literal `{`, as RE2 reads it
    const min = Number(counted[1] || "0");
    const max = counted[2] ? (counted[3] ? Number(counted[3]) : Infinity) : min;
    result = { end: k + counted[0].length, min, repeats: max > 1 };
  } else return { end: k, min: 1, repeats: false };
  if (body[result.end] === "?") result.end++; // lazy
  return result;
}

/** Rarity of a character in output: higher is rarer (upper case rarer than lower, unlisted rarest). */
function rarity(char: string): number {
  const lower = char.toLowerCase();
  const at = COMMON.indexOf(lower);
  if (at === -1) return COMMON.length * 2;
  return at * 2 + (char !== lower ? 1 : 0);
}

/** The run's characters to look for, rarest first, as code points (with the other case under `(?i)`). */
function charsToTry(run: string, ignoreCase: boolean): CharVariants[] {
  const seen = new Set<string>();
  const chars: { rarity: number; variants: number[] }[] = [];
  for (const char of run) {
    const key = ignoreCase ? char.toLowerCase() : char;
    if (seen.has(key) || char === " " || char === "\t") continue;
    seen.add(key);
    const code = char.codePointAt(0)!;
    const variants = ignoreCase ? [...new Set([code, ...asciiFolds(char)])] : [code];
    chars.push({ rarity: rarity(char), variants });
  }
  chars.sort((a, b) => b.rarity - a.rarity);
  return chars.slice(0, MAX_CHARS_TRIED).map((char) => char.variants);
}

/** Per character: the ASCII characters RE2's `(?i)` matches it with (its case-folding orbit, as far as ASCII goes). */
const foldsKnown = new Map<string, number[]>();

/**
 * The ASCII characters `char` matches under RE2's `(?i)`, asked of RE2 itself (128 tests, once per
 * character). Only ASCII counts: a chunk is passed over only when it is ASCII, so a character beyond
 * ASCII can never be found in one, and its absence from it proves nothing about its folds.
 */
function asciiFolds(char: string): number[] {
  let folds = foldsKnown.get(char);
  if (folds) return folds;
  const re = RE2JS.compile(`(?i)${RE2JS.quote(char)}`);
  folds = [];
  for (let code = 0; code < 0x80; code++) if (re.matches(String.fromCharCode(code))) folds.push(code);
  if (foldsKnown.size < 1024) foldsKnown.set(char, folds);
  return folds;
}

/** A chunk that may be passed over: ASCII, with no ESC and no CR (see the module comment). */
export function plainChunk(chunk: Uint8Array): boolean {
  return isAscii(chunk) && chunk.indexOf(0x1b) === -1 && chunk.indexOf(0x0d) === -1;
}

/**
 * Whether `text` (whole lines of a plain chunk) could hold a line the pattern matches: false only when,
 * for every alternative, a character it requires is absent from `text`.
 */
export function mayHoldMatch(required: RequiredText, text: Uint8Array): boolean {
  const absent = (code: number) => text.indexOf(code) === -1;
  for (const chars of required.alternatives) {
    let ruledOut = false;
    for (const variants of chars) {
      // A code point beyond ASCII is never in a plain chunk.
      if (variants.every((code) => code > 0x7f || absent(code))) {
        ruledOut = true;
        break;
      }
    }
    if (!ruledOut) return true;
  }
  return false;
}
