/**
 * Seeded fuzzing of the output path: random byte streams, rich in escape introducers, terminators,
 * C1 controls, CRs, cursor moves, invisible characters and broken UTF-8, fed to an OutputDecoder
 * whole and split across reads at random points. Checks: no control character ever comes out, every
 * stream is done in bounded time, and (for streams without what redraws a line — a lone CR, a
 * backspace, a cursor move or erase in the line — whose redraw may straddle reads, and without
 * retention gaps) the text does not depend on where the reads were split; and random redraws agree
 * with a cell-by-cell model of a terminal line. A failure names its seed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputDecoder } from "../../../src/core/output/output-decoder.ts";
import { renderTerminalText } from "../../../src/core/output/terminal-text.ts";
import { CONTROL_CHARACTER, fuzzStream, prng } from "../../helpers/hostile-output.ts";

const CASES = 3_000;

/** The stream through one decoder in reads ending at `cuts`; the last read is final. */
function decode(bytes: Buffer, cuts: number[]): string {
  const decoder = new OutputDecoder();
  let text = "";
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    text += decoder.take({ head: bytes.subarray(from, cut), tail: Buffer.alloc(0), omittedBytes: 0 }, cut === bytes.length).text;
    from = cut;
  }
  return text;
}

function randomCuts(random: () => number, length: number): number[] {
  const cuts = new Set<number>();
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) cuts.add(Math.floor(random() * length));
  return [...cuts].sort((a, b) => a - b).filter((cut) => cut > 0 && cut < length);
}

const show = (text: string) => JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}…` : text);

describe("output fuzzing (seeded)", () => {
  it(`${CASES} random streams with redraws: never a control character, always quick, whole or split`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(seed);
      const bytes = fuzzStream(random, true);
      const t0 = performance.now();
      const whole = decode(bytes, []);
      const split = decode(bytes, randomCuts(random, bytes.length));
      const ms = performance.now() - t0;
      assert.ok(!CONTROL_CHARACTER.test(whole), `seed ${seed}: ${show(whole)}`);
      assert.ok(!CONTROL_CHARACTER.test(split), `seed ${seed} (split): ${show(split)}`);
      assert.ok(ms < 1_000, `seed ${seed}: ${bytes.length} bytes took ${ms.toFixed(0)} ms`);
    }
  });

  it(`${CASES} random streams without redraws: the text is the same however the reads were split`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(1_000_000 + seed);
      const bytes = fuzzStream(random, false);
      const whole = decode(bytes, []);
      const cuts = randomCuts(random, bytes.length);
      const split = decode(bytes, cuts);
      assert.ok(split === whole, `seed ${1_000_000 + seed}, cuts ${cuts.join(",")}:\n whole ${show(whole)}\n split ${show(split)}`);
      const bytewise =
        bytes.length <= 400
          ? decode(
              bytes,
              Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
            )
          : whole;
      assert.ok(bytewise === whole, `seed ${1_000_000 + seed}, one byte per read:\n whole ${show(whole)}\n split ${show(bytewise)}`);
      assert.ok(!CONTROL_CHARACTER.test(whole), `seed ${1_000_000 + seed}: ${show(whole)}`);
    }
  });

  it(`${CASES} random redraws agree with a plain cell-by-cell model of a terminal line`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(2_000_000 + seed);
      const tokens = Array.from(
        { length: 1 + Math.floor(random() * 60) },
        () => REDRAW_TOKENS[Math.floor(random() * REDRAW_TOKENS.length)]!,
      );
      const text = tokens.join("");
      const expected = referenceRender(tokens);
      const actual = renderTerminalText(text);
      assert.ok(
        actual === expected,
        `seed ${2_000_000 + seed}: ${JSON.stringify(text)}\n expected ${JSON.stringify(expected)}\n actual   ${JSON.stringify(actual)}`,
      );
    }
  });
});

/**
 * Tokens whose meaning is unambiguous: characters (one astral), line ends, cursor moves within the
 * line (CR, backspace, `CSI G`, `C`, `D`, a move far past the line), erases in line and below, a
 * colour, a bidi override.
 */
const REDRAW_TOKENS = [
  "a",
  "b",
  "c",
  "é",
  "😀",
  " ",
  "\r",
  "\r",
  "\n",
  "\r\n",
  "\b",
  "\x1b[G",
  "\x1b[1G",
  "\x1b[4G",
  "\x1b[0G",
  "\x1b[C",
  "\x1b[3C",
  "\x1b[D",
  "\x1b[2D",
  "\x1b[700G",
  "\x1b[K",
  "\x1b[0K",
  "\x1b[1K",
  "\x1b[2K",
  "\x1b[J",
  "\x1b[31m",
  "\u202e",
];

/** The furthest cell a cursor move reaches past the written line, 0-based (line-cells.ts). */
const MAX_COLUMN = 119;

/**
 * A terminal line done the obvious way, one cell at a time (quadratic, fine for a few tokens): the
 * cursor writes a character into its cell and moves right, cells skipped over are blank, CR (not
 * before a LF) and `CSI G` move it to a column, backspace and `CSI C`/`D` by some, erases blank
 * cells at once; at LF the line ends, erased and skipped cells as spaces, trailing ones left out.
 */
function referenceRender(tokens: string[]): string {
  let out = "";
  let line: (string | null)[] = [];
  let col = 0;
  const move = (to: number) => {
    col = Math.max(0, Math.min(to, Math.max(MAX_COLUMN, line.length)));
  };
  const put = (char: string) => {
    while (line.length < col) line.push(null);
    line[col++] = char;
  };
  const erase = (from: number, to: number) => {
    for (let j = from; j < Math.min(to, line.length); j++) line[j] = null;
  };
  const endLine = () => {
    let end = line.length;
    while (end > 0 && line[end - 1] === null) end--;
    out += line
      .slice(0, end)
      .map((cell) => cell ?? " ")
      .join("");
    line = [];
    col = 0;
  };
  tokens.forEach((token, i) => {
    const csi = /^\x1b\[(\d*)([GCDKJm])$/.exec(token);
    const n = Number(csi?.[1] || 0);
    if (token === "\n" || token === "\r\n") {
      endLine();
      out += "\n";
    } else if (token === "\r") {
      const next = tokens[i + 1];
      if (next === undefined || next.startsWith("\n")) return; // CR before LF (or at the end) changes nothing
      move(0);
    } else if (token === "\b") move(col - 1);
    else if (csi?.[2] === "G") move(Math.max(1, n) - 1);
    else if (csi?.[2] === "C") move(col + Math.max(1, n));
    else if (csi?.[2] === "D") move(col - Math.max(1, n));
    else if (csi?.[2] === "K" || csi?.[2] === "J") {
      if (n === 0) erase(col, Number.POSITIVE_INFINITY);
      else if (n === 1) erase(0, col + 1);
      else erase(0, Number.POSITIVE_INFINITY);
    } else if (csi?.[2] === "m") {
      // a colour: nothing to show
    } else if (token === "\u202e") {
      for (const char of "<U+202E>") put(char);
    } else put(token);
  });
  endLine();
  return out;
}
