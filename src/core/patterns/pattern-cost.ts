import { RE2JS } from "re2js";

/**
 * Largest total width of the counted repeats a pattern may have where the output chooses where they
 * start: at 8 (513 DFA states) the worst shape, `a[ab]{8}[cd]` on random a/b lines, runs at 31 MB/s
 * idle; at 14 the states fill re2js's 8 MB cache and it falls back to simulation (under 1 MB/s).
 */
export const MAX_COUNTED_REPEAT = 8;

/**
 * A counted repeat of a class entered where the text chooses (`[ab]{490}` after an `a`, `.{0,300}`
 * after `error`) lets any subset of its positions be live: up to 2^width DFA states, past re2js's
 * cache. One entered at every position (first in the pattern) or right after a character it does not
 * match (`commit [0-9a-f]{40}`) has one live position, as has a repeated literal; the widths of the
 * others add up (a group's count multiplies its content) and over {@link MAX_COUNTED_REPEAT} refuse.
 */
export interface CostlyRepeat {
  /** The repeat as written, e.g. `.{0,300}`. */
  fragment: string;
  /** Its index in the pattern. */
  at: number;
  /** How many copies of its atom the engine makes (with the counts of groups around it). */
  width: number;
}

interface Atom {
  kind: "literal" | "class" | "group" | "empty";
  start: number;
  end: number;
  /** Where a group's content starts (it ends before `end - 1`). */
  innerStart?: number;
}

/** Where a sequence starts: first in the pattern, or after a literal character (its text). */
interface Entry {
  atStart: boolean;
  literal?: string | undefined;
}

/** The counted repeats that cost, widest first, when their widths add up to more than {@link MAX_COUNTED_REPEAT}; else []. */
export function costlyRepeats(source: string): CostlyRepeat[] {
  const flags = /^\(\?[imsU]+\)/.exec(source)?.[0] ?? "";
  const found: CostlyRepeat[] = [];
  walk({ source, flags, found }, flags.length, source.length, 1, { atStart: true });
  const total = found.reduce((sum, repeat) => sum + repeat.width, 0);
  return total > MAX_COUNTED_REPEAT ? found.sort((a, b) => b.width - a.width) : [];
}

interface Walk {
  source: string;
  flags: string;
  found: CostlyRepeat[];
}

/**
 * Walks the alternatives in `[from, to)` of the pattern, each entered as `entry` says, under a group
 * count of `multiplier`; `outer` is the outermost counted group around them (named instead of its parts).
 */
function walk(state: Walk, from: number, to: number, multiplier: number, entry: Entry, outer?: { at: number; end: number }): void {
  const { source } = state;
  let here = entry;
  for (let k = from; k < to; ) {
    if (source[k] === "|") {
      here = entry;
      k++;
      continue;
    }
    const atom = atomAt(source, k);
    const repeat = countAt(source, atom.end);
    k = repeat?.end ?? atom.end;
    const count = (repeat?.count ?? 1) * multiplier;
    if (atom.kind === "group") {
      const named = outer ?? (repeat && repeat.count > 1 ? { at: atom.start, end: k } : undefined);
      walk(state, atom.innerStart!, atom.end - 1, count, here, named);
    } else if (atom.kind === "class" && count > 1 && !enteredOnce(state, atom, here)) {
      const named = outer ?? { at: atom.start, end: k };
      const same = state.found.find((repeat) => repeat.at === named.at);
      if (same) same.width += count;
      else state.found.push({ fragment: source.slice(named.at, named.end), at: named.at, width: count });
    }
    if (atom.kind === "literal") here = { atStart: false, literal: literalText(source.slice(atom.start, atom.end)) };
    else if (atom.kind !== "empty") here = { atStart: false };
  }
}

/**
 * A repeat whose atom can be live at one position only: first in the pattern (entered everywhere,
 * so its live positions are always a prefix), or right after a literal character it does not match.
 */
function enteredOnce(state: Walk, atom: Atom, entry: Entry): boolean {
  if (entry.atStart) return true;
  const literal = entry.literal;
  if (literal === undefined) return false;
  const re = RE2JS.compile(`${state.flags}^(?:${state.source.slice(atom.start, atom.end)})$`);
  return !re.test(literal) && !(state.flags.includes("i") && (re.test(literal.toLowerCase()) || re.test(literal.toUpperCase())));
}

/** The character a literal atom stands for, when it is plain (`x`, `\.`), else undefined. */
function literalText(atom: string): string | undefined {
  if (!atom.startsWith("\\")) return atom;
  return /^\\[^A-Za-z0-9]$/.test(atom) ? atom[1] : undefined;
}

/** `{n}`, `{n,}` or `{n,m}` (lazy or not) at `k`: the copies of the atom the engine makes. */
function countAt(source: string, k: number): { end: number; count: number } | undefined {
  const counted = /^\{(\d+)(,?)(\d*)\}\??/.exec(source.slice(k, k + 16));
  if (counted) return { end: k + counted[0].length, count: Number(counted[3] || counted[1]) };
  const other = /^[*+?]\??/.exec(source.slice(k, k + 2));
  return other ? { end: k + other[0].length, count: 1 } : undefined;
}

function atomAt(source: string, k: number): Atom {
  const c = source[k];
  if (c === "\\") return escapeAt(source, k);
  if (c === "[") return { kind: "class", start: k, end: classEnd(source, k) };
  if (c === "(") {
    const end = groupEnd(source, k);
    const open = /^\((?:\?:|\?P?<[A-Za-z_][A-Za-z0-9_]*>|\?[imsU-]*:)?/.exec(source.slice(k))![0];
    if (/^\(\?[imsU-]+\)$/.test(source.slice(k, end))) return { kind: "empty", start: k, end };
    return { kind: "group", start: k, end, innerStart: k + open.length };
  }
  if (c === ".") return { kind: "class", start: k, end: k + 1 };
  if (c === "^" || c === "$") return { kind: "empty", start: k, end: k + 1 };
  const width = source.codePointAt(k)! > 0xffff ? 2 : 1;
  return { kind: "literal", start: k, end: k + width };
}

function escapeAt(source: string, k: number): Atom {
  const next = source[k + 1] ?? "";
  if (next === "Q") {
    const close = source.indexOf("\\E", k + 2);
    return { kind: "literal", start: k, end: close === -1 ? source.length : close + 2 };
  }
  if ("pPx".includes(next) && source[k + 2] === "{") {
    const end = source.indexOf("}", k + 3) + 1;
    return { kind: next === "x" ? "literal" : "class", start: k, end };
  }
  if (next === "p" || next === "P") return { kind: "class", start: k, end: k + 3 };
  if (next === "x") return { kind: "literal", start: k, end: k + 4 };
  if ("dDwWsS".includes(next)) return { kind: "class", start: k, end: k + 2 };
  if ("bBAz".includes(next)) return { kind: "empty", start: k, end: k + 2 };
  if (/[0-7]/.test(next)) return { kind: "literal", start: k, end: k + 1 + (/^[0-7]{1,3}/.exec(source.slice(k + 1))?.[0].length ?? 1) };
  return { kind: "literal", start: k, end: k + 2 };
}

/**
 * The index just past the class that opens at `k` of a valid pattern (`]` first in it is literal, as
 * is a `[` that no `:]` follows).
 */
export function classEnd(source: string, k: number): number {
  let i = k + 1;
  if (source[i] === "^") i++;
  if (source[i] === "]") i++;
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[" && source[i + 1] === ":") i = Math.max(i, source.indexOf(":]", i + 2) + 1);
    else if (c === "]") return i + 1;
  }
  return source.length;
}

/** The index just past the group that opens at `k` of a valid pattern, classes and escapes inside skipped. */
export function groupEnd(source: string, k: number): number {
  let depth = 0;
  for (let i = k; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      if (source[i + 1] === "Q") {
        const close = source.indexOf("\\E", i + 2);
        i = close === -1 ? source.length : close + 1;
      } else i++;
    } else if (c === "[") i = classEnd(source, i) - 1;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return source.length;
}
