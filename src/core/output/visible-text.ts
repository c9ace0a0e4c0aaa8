/**
 * Characters that must never be interpreted where the model or a person reads them: the invisible
 * ones (bidi controls, zero-width and format characters, separators), their visible form `<U+202E>`,
 * and the two escapers built on it, one line of metadata (`metadataLine`) and multi-line text for the
 * TUI (`visibleText`). Both linear: a native regex finds each candidate.
 */

/**
 * Invisible characters made visible wherever text reaches the model or the TUI. A terminal draws
 * them as nothing (or reorders the text around them), while the model reads them, so the two would
 * read different text (the "Trojan Source" class, and invisible instructions hidden in tag characters).
 * Pairs of first and last code point, inclusive.
 */
export const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad], // soft hyphen
  [0x034f, 0x034f], // combining grapheme joiner
  [0x061c, 0x061c], // Arabic letter mark
  [0x115f, 0x1160], // Hangul choseong and jungseong fillers
  [0x17b4, 0x17b5], // Khmer inherent vowels
  [0x180b, 0x180f], // Mongolian free variation selectors and vowel separator
  [0x200b, 0x200f], // zero width space, non-joiner, joiner; left-to-right and right-to-left marks
  [0x2028, 0x2029], // line and paragraph separators
  [0x202a, 0x202e], // bidi embeddings, pop, overrides
  [0x2060, 0x206f], // word joiner, invisible operators, bidi isolates, deprecated format controls
  [0x3164, 0x3164], // Hangul filler
  [0xfeff, 0xfeff], // zero width no-break space (byte order mark)
  [0xffa0, 0xffa0], // halfwidth Hangul filler
  [0xfff9, 0xfffb], // interlinear annotation controls
  [0x1bca0, 0x1bca3], // shorthand format controls
  [0x1d173, 0x1d17a], // musical symbol format controls
  [0xe0000, 0xe007f], // tag characters
  [0xe0100, 0xe01ef], // variation selectors supplement
];

const ZWJ = 0x200d;

/**
 * What may be a control or an invisible character: every C0 and C1 control and DEL, the BMP ranges
 * above, and the high surrogates of the astral ranges (the whole code point is checked in code).
 */
const BMP_CLASS =
  "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f" +
  "\\u3164\\ufeff\\uffa0\\ufff9-\\ufffb";
const HIGH_SURROGATES = "\\ud82f\\ud834\\udb40";

/**
 * Controls (except TAB and LF) and invisible-character candidates, one code unit each: where the
 * output renderer's plain-text scan stops (it reads the low half of a surrogate pair itself).
 */
export const SPECIAL_IN_TEXT = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BMP_CLASS}${HIGH_SURROGATES}]`, "g");
/** The same as whole characters (an astral candidate is matched as its pair), TAB and LF kept. */
const TEXT_CANDIDATES = new RegExp(
  `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BMP_CLASS}]|[${HIGH_SURROGATES}][\\udc00-\\udfff]`,
  "g",
);
/** Every control and invisible-character candidate, TAB and LF included: what metadata must not keep. */
const METADATA_CANDIDATES = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BMP_CLASS}]|[${HIGH_SURROGATES}][\\udc00-\\udfff]`, "g");

/**
 * One byte per UTF-16 code unit, 1 where {@link SPECIAL_IN_TEXT} matches: a table lookup is the
 * cheapest test a hot loop can make, whatever the script of the text.
 */
export const SPECIAL_UNITS = new Uint8Array(0x10000);
SPECIAL_UNITS.fill(1, 0x00, 0x09);
SPECIAL_UNITS.fill(1, 0x0b, 0x20);
SPECIAL_UNITS.fill(1, 0x7f, 0xa0);
for (const [first, last] of INVISIBLE_RANGES) if (last <= 0xffff) SPECIAL_UNITS.fill(1, first, last + 1);
for (const high of [0xd82f, 0xd834, 0xdb40]) SPECIAL_UNITS[high] = 1;

const FLAT_RANGES = Int32Array.from(INVISIBLE_RANGES.flat());

/** True when `cp` is in {@link INVISIBLE_RANGES}. */
export function isInvisible(cp: number): boolean {
  for (let k = 0; k < FLAT_RANGES.length; k += 2) {
    if (cp < FLAT_RANGES[k]!) return false;
    if (cp <= FLAT_RANGES[k + 1]!) return true;
  }
  return false;
}

const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;

/** A code point after which a zero width joiner builds an emoji sequence (👨‍👩‍👧), which a terminal draws. */
export function joinsEmoji(previous: number | undefined): boolean {
  if (previous === undefined) return false;
  if (previous === 0xfe0f || (previous >= 0x1f3fb && previous <= 0x1f3ff)) return true; // emoji presentation, skin tones
  return previous >= 0xa9 && PICTOGRAPHIC.test(String.fromCodePoint(previous));
}

/** The code point that ends just before `index` in `text`, or undefined at the start. */
export function codePointBefore(text: string, index: number): number | undefined {
  if (index <= 0) return undefined;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return ((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/** `<U+202E>`: how an invisible character or a non-ASCII control is shown. */
export function codePointName(cp: number): string {
  return `<U+${cp.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** `\e`, `\n`, `\x07`: how an ASCII control is shown. */
function asciiControlName(code: number): string {
  switch (code) {
    case 0x09:
      return "\\t";
    case 0x0a:
      return "\\n";
    case 0x0d:
      return "\\r";
    case 0x1b:
      return "\\e";
    default:
      return `\\x${code.toString(16).padStart(2, "0")}`;
  }
}

/**
 * The visible form of the candidate `match` found at `offset` of `text`, or `match` itself when it is
 * an ordinary character after all (an astral character sharing a high surrogate, a joiner inside an
 * emoji sequence).
 */
function shown(match: string, offset: number, text: string): string {
  const code = match.charCodeAt(0);
  if (code < 0x20 || code === 0x7f) return asciiControlName(code);
  if (code <= 0x9f) return codePointName(code);
  if (code >= 0xd800 && code <= 0xdbff) {
    const cp = text.codePointAt(offset)!;
    return cp > 0xffff && isInvisible(cp) ? codePointName(cp) : match;
  }
  if (code === ZWJ && joinsEmoji(codePointBefore(text, offset))) return match;
  return codePointName(code);
}

function escapeWith(pattern: RegExp, text: string): string {
  pattern.lastIndex = 0;
  if (!pattern.test(text)) return text;
  pattern.lastIndex = 0;
  return text.replace(pattern, shown);
}

/**
 * Metadata (a cwd, a command, a path, a reason) as one line that cannot be mistaken for anything else:
 * ASCII controls as `\e`, `\n`, `\r`, `\t`, `\xHH`; C1 controls, separators, bidi controls and
 * invisible characters as `<U+XXXX>`. Nothing is removed and a backslash stays as it is, so a Windows
 * path or a shell command stays readable.
 */
export function metadataLine(text: string): string {
  return escapeWith(METADATA_CANDIDATES, text);
}

/**
 * Text for the TUI, lines kept: TAB and LF stay, every other control (so every escape sequence) and
 * every invisible character is shown as in {@link metadataLine}. Nothing drawn can move the cursor,
 * change a title, write the clipboard or reorder the text around it.
 */
export function visibleText(text: string): string {
  return escapeWith(TEXT_CANDIDATES, text);
}
