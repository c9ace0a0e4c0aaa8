/*
 * patterns/ — the pattern engine and its cost, for `until_pattern` and `wake_on_pattern` alike.
 * The flow at a glance:
 * 1. `compileUntilPattern` (this file) compiles the model's pattern with re2js (RE2's linear-time
 *    automata), refusing before anything runs what is invalid, unsupported or too costly
 *    (pattern-cost.ts: counted repeats that would make the engine leave its DFA).
 * 2. A tester (line-tester.ts) renders a job's bytes into lines as the model reads them and passes
 *    over plain lines that cannot match (required-text.ts: what a line must contain).
 * 3. Each test is paid from the pattern's budget for that job (pattern-budget.ts); spent, it stops.
 * Never touches a job: the call's wait (wait/) and the wake watch (wake-watch/) hold the testers.
 *
 * May import: shared, output.
 */
/**
 * What a pattern may be and every error about it (`compileUntilPattern`, called before anything is
 * spawned or written), and a compiled pattern tested on one line. Syntax is RE2's: `(?i)` at the
 * start ignores case, `\d`, `\w`, `\b` are ASCII, `\p{L}` is Unicode.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from "re2js";
import { LINE_TEST_CHARS, MAX_PATTERN_CHARS } from "../shared/constants.ts";
import { ExecRequestError } from "../shared/errors.ts";
import { type CostlyRepeat, costlyRepeats, MAX_COUNTED_REPEAT } from "./pattern-cost.ts";

/**
 * Largest compiled pattern, in engine instructions: matching is linear in the line but its constant
 * grows with the program (40 × `\p{L}{1000}`, 40 002 instructions, took 8.5 s on a 20 K line).
 */
export const MAX_PATTERN_INSTRUCTIONS = 1_000;

/** `matched_line` is cut to this many characters around the match: a huge line cannot flood the result. */
export const MATCHED_LINE_CHARS = 500;

export interface LinePattern {
  /** The pattern as the model wrote it. */
  readonly source: string;
  /** Matches somewhere in `line` (one line); a line over {@link LINE_TEST_CHARS} is tested as its first and last halves. */
  test(line: string): boolean;
  /** `line` cut to at most `limit` (default {@link MATCHED_LINE_CHARS}) characters around its match, for `matched_line` and wakes. */
  excerpt(line: string, limit?: number): string;
}

const HALF = LINE_TEST_CHARS / 2;
const ELLIPSIS = "…";

/** Where a cut at `index` of `text` would split a surrogate pair, the index moved to keep the pair whole. */
export function codePointBoundary(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/** The parts of `line` a test looks at: the whole line, or its first and last halves. */
export function testedParts(line: string): string[] {
  if (line.length <= LINE_TEST_CHARS) return [line];
  return [line.slice(0, codePointBoundary(line, HALF)), line.slice(codePointBoundary(line, line.length - HALF))];
}

class Re2LinePattern implements LinePattern {
  constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  test(line: string): boolean {
    for (const part of testedParts(line)) if (this.re.test(part)) return true;
    return false;
  }

  excerpt(line: string, limit = MATCHED_LINE_CHARS): string {
    if (line.length <= limit) return line;
    // Find the match in the part that holds it, to show the matched text rather than the line's start.
    const parts = testedParts(line);
    for (const [k, part] of parts.entries()) {
      const matcher = this.re.matcher(part);
      if (!matcher.find()) continue;
      const offset = k === 0 ? 0 : line.length - part.length;
      return cutAround(line, offset + matcher.start(), offset + matcher.end(), limit);
    }
    return cutAround(line, 0, 0, limit);
  }
}

/** At most `limit` characters of `line` showing `[start, end)` (as much of it as fits), cut ends marked. */
export function cutAround(line: string, start: number, end: number, limit = MATCHED_LINE_CHARS): string {
  if (line.length <= limit) return line;
  const room = limit - 2; // both ends may carry a marker
  const span = Math.min(end - start, room);
  let from = Math.max(0, start - Math.floor((room - span) / 2));
  from = Math.min(from, line.length - room);
  from = codePointBoundary(line, from);
  const to = codePointBoundary(line, Math.min(line.length, from + room));
  return `${from > 0 ? ELLIPSIS : ""}${line.slice(from, to)}${to < line.length ? ELLIPSIS : ""}`;
}

/** The first unescaped `(?<=` or `(?<!` of `source`, outside a character class, or -1. */
function lookBehindAt(source: string): number {
  let inClass = false;
  for (let k = 0; k < source.length; k++) {
    const c = source[k];
    if (c === "\\") {
      k++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(" && (source.startsWith("(?<=", k) || source.startsWith("(?<!", k))) return k;
  }
  return -1;
}

/** Which parameter a pattern came in, and what its refusal leaves untouched. */
export interface PatternParameter {
  /** `until_pattern` or `wake_on_pattern`. */
  name: string;
  /** The refusal's last sentence: what did not happen. */
  untouched: string;
}

const UNTIL_PATTERN: PatternParameter = { name: "until_pattern", untouched: "Nothing was started or written." };

/** "at character N" for `fragment` of `source`, when it can be found there. */
function where(source: string, fragment: string | null | undefined, known?: number): string {
  const at = known ?? (fragment ? source.indexOf(fragment) : -1);
  return at >= 0 ? ` at character ${[...source.slice(0, at)].length + 1}` : "";
}

function unsupported(param: PatternParameter, construct: string, fragment: string, at: string, instead: string): ExecRequestError {
  return new ExecRequestError(
    `${param.name} uses ${construct} \`${fragment}\`${at}, which the linear-time pattern engine cannot run. ${instead} ${param.untouched}`,
  );
}

/** Names the construct behind a parse error, or undefined when the pattern is simply invalid. */
function unsupportedConstruct(param: PatternParameter, source: string, error: RE2JSSyntaxException): ExecRequestError | undefined {
  const input = error.input ?? "";
  const behind = lookBehindAt(source);
  if (behind >= 0 && (error.error === "invalid named capture" || input.startsWith("(?<"))) {
    const fragment = source.slice(behind, behind + 4);
    return unsupported(
      param,
      "look-behind",
      fragment,
      where(source, fragment, behind),
      "Include the text before in the pattern itself (`error: .*failed` rather than `(?<=error: ).*failed`): the line is matched anywhere, so nothing is lost.",
    );
  }
  const at = where(source, input);
  if (input === "(?=" || input === "(?!") {
    const instead =
      input === "(?="
        ? "Match the following text as part of the pattern (`foobar` rather than `foo(?=bar)`)."
        : "Match the line you wait for positively, or exclude with a character class (`foo[^b]` rather than `foo(?!b)`).";
    return unsupported(param, input === "(?=" ? "look-ahead" : "negative look-ahead", input, at, instead);
  }
  if (/^\\[1-9]/.test(input) || input === "\\k" || input === "(?P") {
    return unsupported(
      param,
      "a back-reference",
      input === "(?P" ? "(?P=" : input,
      at,
      "Write the repeated text out, or match it with a class (`(\\w+) \\w+` rather than `(\\w+) \\1`).",
    );
  }
  if (input === "(?>")
    return unsupported(
      param,
      "an atomic group",
      input,
      at,
      "Use a plain group `(?:…)`: this engine never backtracks, so it means the same here.",
    );
  if (input === "(?(") return unsupported(param, "a conditional", input, at, "Use an alternation `(?:a|b)`.");
  if (error.error === "invalid nested repetition operator" && input.length >= 2 && input.endsWith("+")) {
    return unsupported(
      param,
      "a possessive repeat",
      input,
      at,
      "Drop the extra `+` (`a+` rather than `a++`): this engine never backtracks.",
    );
  }
  return undefined;
}

/** Hints for escapes from other regex dialects that RE2 spells differently. */
const ESCAPE_HINTS: Record<string, string> = {
  "\\u": "write a code point as `\\x{0041}`",
  "\\Z": "use `$` (a line is tested without its line break)",
  "\\e": "escape sequences are removed from the output before matching; match the visible text",
  "\\c": "control characters are removed from the output before matching; match the visible text",
  "\\h": "use `[ \\t]`",
  "\\R": "a line never contains a line break; match one line",
  "\\G": "anchor with `^`",
};

function invalid(param: PatternParameter, source: string, error: RE2JSSyntaxException): ExecRequestError {
  const input = error.input ?? "";
  const detail = input ? `${error.error} \`${input}\`${where(source, input)}` : String(error.error ?? error.message);
  const hint = ESCAPE_HINTS[input] ? ` (${ESCAPE_HINTS[input]})` : "";
  return new ExecRequestError(
    `${param.name} is not a valid regular expression: ${detail}${hint}. The syntax is RE2's (like JavaScript's without look-around and back-references); ` +
      `escape a literal \`(\`, \`[\`, \`.\`, \`*\`, \`+\` or \`?\` with \`\\\`. ${param.untouched}`,
  );
}

/**
 * Compiles the model's `until_pattern` (or, given `param`, another parameter with the same rules:
 * `wake_on_pattern`). Throws {@link ExecRequestError} with what is wrong and what to do instead; call
 * it before anything is spawned, written or changed.
 */
export function compileUntilPattern(source: string, param: PatternParameter = UNTIL_PATTERN): LinePattern {
  const PREFIX = param.name;
  if (source.length === 0) {
    throw new ExecRequestError(
      `${PREFIX} is empty. Give a regular expression for the line to wait for, e.g. \`ready|listening on\` (\`(?i)ready\` ignores case).`,
    );
  }
  const chars = [...source].length;
  if (chars > MAX_PATTERN_CHARS) {
    throw new ExecRequestError(
      `${PREFIX} is ${chars} characters long; the limit is ${MAX_PATTERN_CHARS}. Match a short distinctive part of the line (the pattern is found anywhere in it). ${param.untouched}`,
    );
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) throw unsupportedConstruct(param, source, error) ?? invalid(param, source, error);
    if (error instanceof RE2JSException) {
      throw new ExecRequestError(
        `${PREFIX} could not be compiled: ${error.message}. Simplify it (fewer or smaller repetitions). ${param.untouched}`,
      );
    }
    throw error;
  }
  const size = re.programSize();
  if (size > MAX_PATTERN_INSTRUCTIONS) {
    throw new ExecRequestError(
      `${PREFIX} is too complex: it compiles to ${size} instructions, the limit is ${MAX_PATTERN_INSTRUCTIONS} (each costs time on every character of output). ` +
        `Large counted repetitions such as \`.{1000}\` cause this; use a smaller count, \`+\` or \`.*\`. ${param.untouched}`,
    );
  }
  const costly = costlyRepeats(source);
  if (costly.length > 0) throw tooCostly(param, source, costly);
  return new Re2LinePattern(source, re);
}

/** The refusal of a pattern whose counted repeats cost too much, naming them (at most three). */
function tooCostly(param: PatternParameter, source: string, costly: CostlyRepeat[]): ExecRequestError {
  const named = costly.slice(0, 3).map((repeat) => `\`${repeat.fragment}\`${where(source, repeat.fragment, repeat.at)}`);
  const width = costly.reduce((sum, repeat) => sum + repeat.width, 0);
  const what =
    costly.length === 1
      ? `${param.name} repeats ${named[0]} up to ${width} times after text it also matches`
      : `${param.name} repeats ${named.join(" and ")}${costly.length > 3 ? " and more" : ""} up to ${width} times in all after text they also match`;
  return new ExecRequestError(
    `${what}: on ordinary output the engine would leave its fast path (seconds per MB). ` +
      `Use \`.*\` or \`+\` (\`error.*timeout\`), or counts adding up to at most ${MAX_COUNTED_REPEAT}. ${param.untouched}`,
  );
}
